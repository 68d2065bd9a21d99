"""kwire.excerpt (`kwire inspect -w FILE`): the packets of the selected exchanges, cut out of real
captures; read back by kwire they give exactly the selected exchanges (api, version, correlation id,
client id, bodies, latency), and tshark reads them as clean TCP."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

CAPTURES = Path(__file__).resolve().parent.parent / "captures"


def kwire(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "kwire", *args], capture_output=True, text=True, timeout=180)


def _unnamed(node):
    """A body without the topic names kwire.native.exchange_enrich adds from Metadata answers (which an excerpt of
    other exchanges does not carry)."""
    if isinstance(node, dict):
        return {k: _unnamed(v) for k, v in node.items() if k != "TopicName"}
    if isinstance(node, list):
        return [_unnamed(v) for v in node]
    return node


def exchanges(text: str) -> list[tuple]:
    out = []
    for line in text.splitlines():
        d = _unnamed(json.loads(line))
        out.append((d["api"], d["api_version"], d["correlation_id"], d["client_id"], d["status"],
                    d["latency_ms"], json.dumps(d["request"], sort_keys=True), json.dumps(d["response"], sort_keys=True)))
    return out


@pytest.mark.parametrize("capture,selection", [
    ("multi-broker-3.pcap", ["--api", "Fetch,Produce"]),
    ("bulk-fetch.pcap", ["--api", "Fetch", "--min-latency", "1"]),
    ("consumer-protocol-lz4.pcap", ["--api", "ConsumerGroupHeartbeat,OffsetCommit"]),
    ("produce-consume-zstd-nano.pcapng", ["--client-id", "kwire-consumer", "-c", "7"]),
    ("share-consumer.pcap", ["--api", "ShareFetch,ShareGroupHeartbeat"]),
])
def test_the_excerpt_gives_exactly_the_selected_exchanges(tmp_path, capture, selection):
    cut = tmp_path / "cut.pcap"
    chosen = kwire("inspect", "--json", *selection, "-w", str(cut), str(CAPTURES / capture))
    assert chosen.returncode == 0, chosen.stderr
    selected = exchanges(chosen.stdout)
    assert selected, "the selection keeps something"
    again = kwire("inspect", "--json", str(cut))
    assert again.returncode == 0, again.stderr
    assert exchanges(again.stdout) == selected
    everything = exchanges(kwire("inspect", "--json", str(CAPTURES / capture)).stdout)
    assert len(everything) > len(selected)


@pytest.mark.skipif(shutil.which("tshark") is None, reason="tshark not installed")
def test_tshark_reads_the_excerpt_as_clean_tcp(tmp_path):
    cut = tmp_path / "cut.pcap"
    assert kwire("inspect", "--api", "Fetch", "-w", str(cut), str(CAPTURES / "bulk-fetch.pcap")).returncode == 0
    analysis = subprocess.run(["tshark", "-r", str(cut), "-Y", "tcp.analysis.flags && !tcp.analysis.window_update",
                               "-T", "fields", "-e", "frame.number"], capture_output=True, text=True, timeout=120)
    assert analysis.returncode == 0 and analysis.stdout.strip() == ""  # no lost segment, no retransmission
    count = subprocess.run(["tshark", "-r", str(cut), "-T", "fields", "-e", "tcp.stream"], capture_output=True,
                           text=True, timeout=120)
    assert len(count.stdout.splitlines()) > 10


@pytest.mark.parametrize("api", ["Produce", "Fetch"])
def test_decrypted_tls_exchanges_are_written_and_decrypt_again(tmp_path, api):
    """--keylog -w: a decrypted TLS connection is written from its start up to its last kept exchange
    (a record cannot be read without those before it): the excerpt, decrypted with the same key log,
    gives the kept exchanges again (and those before them on their connections, nothing else)."""
    capture = CAPTURES / "tls" / "py-tls13-chacha20.pcap"
    keys = Path(str(capture) + ".keys")
    cut = tmp_path / "cut.pcap"
    run = kwire("inspect", "--json", "--api", api, "--keylog", str(keys), "-w", str(cut), str(capture))
    assert run.returncode == 0, run.stderr
    assert "not written" not in run.stderr
    kept = exchanges(run.stdout)
    tls_kept = [e for e, line in zip(kept, run.stdout.splitlines()) if ":9093" in json.loads(line)["broker"]]
    assert tls_kept  # the recording's TLS leg (port 9093) carried some of them
    again = kwire("inspect", "--json", "--api", api, "--keylog", str(keys), str(cut))
    assert exchanges(again.stdout) == kept
    assert "(0 decrypted" not in again.stderr and "not decrypted" not in again.stderr


def test_w_reads_stdin_once(tmp_path):
    """-w on standard input: stdin is copied once to a temporary file (kwire.capture.spool), and the
    excerpt is the one the file gives."""
    capture = Path(__file__).resolve().parent.parent / "captures" / "produce-consume-none.pcap"
    runs = []
    for name, args, data in (("file", [str(capture)], None), ("stdin", ["-"], capture.read_bytes())):
        out = tmp_path / f"{name}.pcap"
        run = subprocess.run([sys.executable, "-m", "kwire", "inspect", "--api", "Fetch", "-w", str(out), *args],
                             input=data, capture_output=True, timeout=120)
        assert run.returncode == 0, run.stderr
        runs.append((run.stdout, out.read_bytes()))
    assert runs[0] == runs[1] and runs[0][1]
