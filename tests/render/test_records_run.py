"""kwire.render.records_run: one record budget per exchange, shared by all its records fields, and
one decompression budget per run; what they cut is said in the output, and the output does not
depend on the number of worker processes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import orjson

import kwire.parallel as parallel
from kwire.native.exchange_sink import offloadable_with_records
from kwire.cli.inspect import write_json_lines
from kwire.cli.keys import Reading
from kwire.pipeline import RunSummary, analyze_files
from kwire.query import ExchangeFilter
from kwire.render.jsonl import JsonLines, exchange_record
from kwire.render.records_run import RecordsRun
from kwire.render.rich_view import exchange_view

from .hostile import bomb_capture

ROOT = Path(__file__).resolve().parents[2]
MIB = 1 << 20


def _exchanges(tmp_path, data: bytes) -> list:
    path = tmp_path / "c.pcap"
    path.write_bytes(data)
    return [ex for ex in analyze_files([str(path)]) if ex.api == "Produce"]


def _partitions(record: dict) -> list[dict]:
    return [p["Records"] for t in record["request"]["TopicData"] for p in t["PartitionData"]]


def test_the_partitions_of_one_exchange_share_its_budget(tmp_path):
    """The issue's case, scaled down: 8 partitions of one big value each, --records."""
    (ex,) = _exchanges(tmp_path, bomb_capture(1, 8, MIB))
    run = RecordsRun(data=int(2.5 * MIB))
    fields = _partitions(exchange_record(ex, records="full", run=run))
    decoded = [f for f in fields if f["batches"][0]["Records"]]
    assert len(decoded) == 2 and len(decoded[0]["batches"][0]["Records"][0]["Value"]) == MIB
    assert "what was left of the record data budget of this exchange" in fields[2]["batches"][0]["error"]
    for f in fields[2:]:
        assert "record data budget of this exchange" in f["batches"][0]["error"]
        assert "record data budget of this exchange used up (2,621,440 bytes): 1 batch cut" in f["budget"]
    assert run.used <= 3 * MIB + (4 << 20)  # what the budget allows, plus the chunk that passed it
    # Each exchange starts afresh.
    again = _partitions(exchange_record(ex, records="full", run=run))
    assert len([f for f in again if f["batches"][0]["Records"]]) == 2


def test_the_run_budget_stops_opening_batches_and_says_so(tmp_path):
    exchanges = _exchanges(tmp_path, bomb_capture(6, 1, MIB))
    run = RecordsRun(limit=2 * MIB)
    opened = [bool(_partitions(exchange_record(ex, records="full", run=run))[0]["batches"][0]["Records"])
              for ex in exchanges]
    assert opened == [True, True, False, False, False, False]
    last = _partitions(exchange_record(exchanges[-1], records="full", run=run))[0]
    assert "decompression budget of this run used up" in last["batches"][0]["error"] and "budget" in last
    assert 2 * MIB < run.used < 2 * MIB + 100 and run.refused == 5  # two records of a MiB value
    assert "KWIRE_MAX_DECOMPRESSED_BYTES" in run.note()
    # The readable view draws on the same run.
    text = _view_text(exchanges[0], "full", run)
    assert "decompression budget of this run used up" in text and run.refused == 6


def test_summaries_list_a_bounded_number_of_batches(tmp_path):
    (ex,) = _exchanges(tmp_path, bomb_capture(1, 20, 10))  # the tree shows 20 partitions
    run = RecordsRun(batches=12)
    fields = _partitions(exchange_record(ex, records="summary", run=run))
    assert sum(len(f["batches"]) for f in fields) == 12
    assert sum(f.get("unlisted", {}).get("batches", 0) for f in fields) == 8
    assert run.used == 0
    text = _view_text(ex, "summary", RecordsRun(batches=12))
    assert text.count("1 batch not listed: 1 record, ") == 8 and "Records: " in text
    note = 'budget: batch budget of this exchange used up (12 batches listed): 1 batch summed in "unlisted"'
    assert text.count(note) == 8


def _view_text(ex, records: str, run: RecordsRun) -> str:
    return "\n".join("".join(piece for piece, _ in line) for line in exchange_view(ex, records=records, run=run).lines)


def _json_run(path, jobs: int, limit: int) -> tuple[list[dict], RecordsRun]:
    class Out:
        buffer = None

        def flush(self):
            pass

    import io

    out = Out()
    out.buffer = io.BytesIO()
    run = RecordsRun(limit=limit)
    write_json_lines(Reading([str(path)]), RunSummary(), None, JsonLines("full", False, ExchangeFilter(), run), jobs,
                     out, offload=offloadable_with_records)
    return [orjson.loads(line) for line in out.buffer.getvalue().splitlines()], run


def test_what_the_run_budget_cuts_does_not_depend_on_workers(tmp_path, monkeypatch):
    monkeypatch.setattr(parallel, "BATCH", 2)
    path = tmp_path / "bombs.pcap"
    path.write_bytes(bomb_capture(12, 2, 256 << 10))
    alone, run_alone = _json_run(path, 0, 3 * MIB)
    together, run_together = _json_run(path, 2, 3 * MIB)
    assert together == alone and run_together.used == run_alone.used
    cut = [line for line in alone if "budget" in _partitions(line)[0]]
    assert len(cut) == 12 - 6 and run_alone.refused == 6


def test_the_environment_sets_the_run_budget(tmp_path):
    path = tmp_path / "bombs.pcap"
    path.write_bytes(bomb_capture(4, 1, MIB))
    env = dict(os.environ, KWIRE_MAX_DECOMPRESSED_BYTES=str(MIB), PYTHONPATH=str(ROOT))
    done = subprocess.run([sys.executable, "-m", "kwire", "inspect", "--json", "--records", "-j", "0", str(path)],
                          capture_output=True, env=env, cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    opened = [bool(_partitions(line)[0]["batches"][0]["Records"]) for line in lines if line["api"] == "Produce"]
    assert opened == [True, False, False, False]
    assert b"decompression budget of this run used up (1,048,576 bytes, KWIRE_MAX_DECOMPRESSED_BYTES): " \
           b"compressed batches of 3 later exchanges were not opened" in done.stderr
    assert b"Traceback" not in done.stderr
