"""JSON Lines made the fast way (kwire.render.jsonl._WRITER, the native core's kwire.native.json_line: the line
from cached parts) against the general way (the whole object built, then encoded), on every committed capture: the same bytes."""

from __future__ import annotations

from pathlib import Path

import pytest

from kwire.pipeline import RunSummary, analyze_files
from kwire.native.exchange_errors import error_codes, response_error_codes
from kwire.native import json_line
from kwire.render import jsonl
from kwire.render.jsonl import JsonLines
from kwire.render.records_run import RecordsRun

CAPTURES = sorted(p for p in (Path(__file__).resolve().parents[2] / "captures").rglob("*")
                  if p.suffix in (".pcap", ".pcapng", ".gz") and ".truth." not in p.name and "tls" not in p.parts)


def _exchanges(path: Path) -> list:
    return list(analyze_files([str(path)], summary=RunSummary()))


class _Writer:
    """A stand-in for jsonl._WRITER: each line the real one's (`calls`: whether it made one), or none."""

    def __init__(self, real=None):
        self.real = real
        self.calls: list[bool] = []

    def line(self, *args):
        line = self.real.line(*args) if self.real is not None else None
        self.calls.append(line is not None)
        return line


def _lines(exchanges, records: str, fast: bool, monkeypatch) -> list[bytes]:
    with monkeypatch.context() as m:
        if not fast:
            m.setattr(jsonl, "_WRITER", _Writer())
        render = JsonLines(records, False, None, RecordsRun())
        return [render(ex) for ex in exchanges]


@pytest.mark.skipif(not jsonl._FAST, reason="the fast way needs orjson 3.10 on")
@pytest.mark.parametrize("records", ["summary", "full"])
def test_fast_lines_are_the_general_lines_on_every_capture(records, monkeypatch):
    assert len(CAPTURES) > 40
    taken = 0
    for path in CAPTURES:
        exchanges = _exchanges(path)
        real = jsonl._WRITER
        counting = _Writer(real)
        monkeypatch.setattr(jsonl, "_WRITER", counting)
        fast = _lines(exchanges, records, True, monkeypatch)
        monkeypatch.setattr(jsonl, "_WRITER", real)
        assert fast == _lines(exchanges, records, False, monkeypatch), path.name
        taken += sum(counting.calls)
    assert taken > 1000  # the fast way was taken, not only the general one


def test_parts_caches_are_bounded(monkeypatch):
    exchanges = _exchanges(CAPTURES[0])
    monkeypatch.setattr(jsonl, "MAX_CACHED", 2)
    jsonl._PARTS.clear()
    render = JsonLines()
    for ex in exchanges:
        render(ex)
    assert len(jsonl._PARTS) <= 2


def test_an_integer_orjson_refuses_goes_the_general_way(monkeypatch):
    """Past 64 bits orjson refuses an integer and the json module writes the whole line (floats spelled
    its way): the fast way must not write that line itself."""
    ex = next(ex for ex in _exchanges(CAPTURES[0]) if ex.response_ts_ns is not None)
    ex.request_ts_ns += 1 << 64
    ex.response_ts_ns += 1 << 64
    fast = JsonLines()(ex)
    assert fast == _lines([ex], "summary", False, monkeypatch)[0]
    assert b'"ts_ns":%d' % ex.request_ts_ns in fast


def test_latency_without_round_is_the_rounded_latency():
    import random

    rng = random.Random(7)
    for _ in range(200_000):
        took = rng.randrange(-json_line._EXACT_NS + 1, json_line._EXACT_NS)
        assert took / 1e6 == round(took / 1e6, 6), took


def test_error_codes_by_the_schema_are_the_generic_walk_on_every_capture():
    found = 0
    for path in CAPTURES:
        for ex in _exchanges(path):
            expected = error_codes(ex.response) if ex.response else []
            assert response_error_codes(ex) == expected, (path.name, ex.api, ex.api_version)
            found += bool(expected)
    assert found > 10


def test_error_codes_in_body_order_when_there_are_several():
    """Two codes or more: their order is the body's (tagged fields come in wire order), so the generic
    walk says it."""
    from kwire.model import Exchange

    body = {"ThrottleTimeMs": 0, "ErrorCode": 0,
            "Responses": [{"Topic": "b", "Partitions": [{"PartitionIndex": 0, "ErrorCode": 3}]},
                          {"Topic": "a", "Partitions": [{"PartitionIndex": 1, "ErrorCode": 0},
                                                        {"PartitionIndex": 2, "ErrorCode": 6}]}]}
    ex = Exchange(1, "c:1", "b:2", "paired", 1, api_key=1, api="Fetch", api_version=12, response=body)
    assert response_error_codes(ex) == [3, 6] == error_codes(body)
    layout = {"ErrorCode": 35, "ApiKeys": [], "_layout": "librdkafka-mock"}
    assert response_error_codes(Exchange(1, "c:1", "b:2", "paired", 1, api_key=18, api="ApiVersions",
                                         api_version=3, response=layout)) == [35]
    unknown = Exchange(1, "c:1", "b:2", "paired", 1, api_key=9999, api_version=0, response={"X": [{"ErrorCode": 7}]})
    assert response_error_codes(unknown) == [7]
