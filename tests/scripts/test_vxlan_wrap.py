"""scripts/vxlan_wrap.py: a capture wrapped in VXLAN reads as the same exchanges, each packet through the tunnel."""

from __future__ import annotations

from pathlib import Path

import pytest

from kwire.capture.files import open_capture
from kwire.pipeline import Pipeline

from tests.script_module import script_module

ROOT = Path(__file__).resolve().parents[2]
vxlan_wrap = script_module("vxlan_wrap")

CAPTURE = ROOT / "captures" / "produce-consume-none.pcap"


def _exchanges(path: Path) -> tuple[list, Pipeline]:
    pipeline = Pipeline()
    found = [ex for batch in pipeline.feed_capture(open_capture(path)) for ex in batch] + pipeline.finish()
    return [(ex.api, ex.correlation_id, ex.status, ex.ts_ns) for ex in found], pipeline


def test_a_wrapped_capture_reads_as_the_same_exchanges(tmp_path):
    out = tmp_path / "vxlan.pcap"
    assert vxlan_wrap.main([str(CAPTURE), str(out)]) == 0
    plain, _ = _exchanges(CAPTURE)
    wrapped, pipeline = _exchanges(out)
    assert wrapped == plain and plain
    packets = sum(1 for _ in open_capture(CAPTURE))
    assert pipeline.summary.net.get("tunnel:VXLAN") == packets


def test_what_is_not_an_ethernet_pcap_is_refused_in_one_line(tmp_path, capsys):
    bad = tmp_path / "bad.pcap"
    bad.write_bytes(b"not a capture at all")
    assert vxlan_wrap.main([str(bad), str(tmp_path / "out.pcap")]) == 1
    assert capsys.readouterr().err.count("\n") == 1
    with pytest.raises(ValueError):
        vxlan_wrap.wrap_capture((ROOT / "captures" / "produce-consume-zstd-nano.pcapng").read_bytes())
