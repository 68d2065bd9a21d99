"""One vocabulary: each fact an exchange shares between JSON Lines, the Parquet `exchanges` table, the
Spark data source and the stats document has one name there, and the same value (so the same unit).

docs/vocabulary.md is read as the statement (its tables of facts, kinds and deprecated names); what
each output writes is taken from the output itself: JSON Lines objects from `exchange_record`, the
Parquet table written with pyarrow from the rows `kwire spark --out` gathers and read back, the data
source's declared columns, the stats document's exchange lists. (tests/spark/test_source.py reads a
real DataFrame of the data source against JSON Lines.)
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from kwire.analytics import Aggregator
from kwire.analytics.facts import exchange_row
from kwire.kafka import pairing
from kwire.outcomes import KINDS
from kwire.pipeline import analyze_files
from kwire.render.jsonl import DEPRECATED_KEYS, exchange_record

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

ROOT = Path(__file__).resolve().parents[1]
DOC = (ROOT / "docs" / "vocabulary.md").read_text()
# Real captures: all statuses, malformed bodies (proxy-faults), trailing bytes (the mock's), waits,
# negotiations; pending-cap read under a lowered cap gives bodies not kept.
CAPTURES = [ROOT / "captures" / "multi-broker-3.pcap", ROOT / "captures" / "problems" / "proxy-faults.pcap.gz",
            ROOT / "captures" / "problems" / "unanswered.pcap.gz", ROOT / "captures" / "problems" / "pending-cap.pcap.gz"]
ENRICHMENTS = {"lag", "fetch", "share"}  # JSON Lines keys added after the facts (README)


def _table(heading: str) -> list[list[str]]:
    """The rows of the first table under `heading` in docs/vocabulary.md, cells stripped of backticks."""
    section = DOC.split(heading, 1)[1]
    rows = []
    for line in section.splitlines()[1:]:
        if rows and not line.startswith("|"):
            break
        if line.startswith("|") and not line.startswith("| ---"):
            rows.append([c.strip().strip("`") for c in line.strip("|").split("|")])
    return rows[1:]  # the header row out


FACTS = {row[0]: dict(unit=row[1], jsonl=row[2] == "yes", parquet=row[3] == "yes", stats=row[4] == "yes")
         for row in _table("## The facts of an exchange")}


@pytest.fixture(scope="module")
def exchanges():
    old = pairing.MAX_PENDING_BYTES
    out = []
    try:
        for capture in CAPTURES:
            pairing.MAX_PENDING_BYTES = 1 << 20 if "pending-cap" in capture.name else old
            out += list(analyze_files([str(capture)]))
    finally:
        pairing.MAX_PENDING_BYTES = old
    return out


@pytest.fixture(scope="module")
def parquet(exchanges, tmp_path_factory):
    from kwire.spark.results import ARROW_EXCHANGES

    path = tmp_path_factory.mktemp("vocabulary") / "exchanges.parquet"
    pq.write_table(pa.Table.from_pylist([exchange_row(ex) for ex in exchanges], schema=ARROW_EXCHANGES), path)
    return pq.read_table(path)


def test_the_captures_cover_every_kind_the_outputs_carry(exchanges):
    bodies = {o.kind for ex in exchanges for o in (ex.request_outcome, ex.response_outcome) if o is not None}
    assert {"decoded", "malformed", "trailing_bytes", "not_kept"} <= bodies
    assert {ex.status for ex in exchanges} >= {"paired", "no_response"}  # no committed capture has no_request
    assert {ex.unanswered for ex in exchanges if ex.status == "no_response"} >= {"connection_closed"}


def test_json_lines_keys_are_the_documented_facts(exchanges):
    keys = set()
    for ex in exchanges:
        keys |= set(exchange_record(ex))
    keys -= set(DEPRECATED_KEYS) | ENRICHMENTS
    assert keys == {name for name, fact in FACTS.items() if fact["jsonl"]}


def test_parquet_and_data_source_columns_are_the_documented_facts(parquet):
    from kwire.spark.schemas import EXCHANGE_SCHEMA
    from kwire.spark.source import EXCHANGE_DDL

    documented = {name for name, fact in FACTS.items() if fact["parquet"]}
    assert set(parquet.column_names) == documented
    assert [f.name for f in EXCHANGE_SCHEMA.fields] == parquet.column_names
    assert [part.split()[0] for part in EXCHANGE_DDL.split(", ")] == parquet.column_names


def test_a_fact_shared_by_json_lines_and_parquet_has_the_same_value(exchanges, parquet):
    shared = [name for name, fact in FACTS.items() if fact["jsonl"] and fact["parquet"]]
    assert {"latency_ms", "request_bytes", "error_codes", "ts_ns", "request_outcome", "unanswered"} <= set(shared)
    rows = parquet.to_pylist()
    assert len(rows) == len(exchanges)
    for ex, row in zip(exchanges, rows):
        record = exchange_record(ex)
        for name in shared:
            assert record[name] == row[name], (name, record[name], row[name])


def test_the_stats_document_lists_exchanges_with_the_same_names_and_values(exchanges):
    agg = Aggregator()
    for ex in exchanges:
        agg.add_exchange(ex)
    doc = agg.document()
    listed = doc["slowest"] + doc["unanswered"]["first"]
    assert listed and doc["unanswered"]["first"]
    records = {(r["ts_ns"], r["client"], r["correlation_id"]): r for r in map(exchange_record, exchanges)}
    names = [name for name, fact in FACTS.items() if fact["stats"]]
    for entry in listed:
        record = records[(entry["ts_ns"], entry["client"], entry["correlation_id"])]
        for name in names:
            assert entry[name] == record[name], (name, entry[name], record[name])


def test_deprecated_json_lines_keys_keep_their_old_meaning(exchanges):
    documented = {}
    for line in DOC.split("## Deprecated names", 1)[1].splitlines():
        if line.startswith("| JSON Lines |"):
            _, old, new = line.strip("|").split("|")[:3]
            documented.update(zip(re.findall(r"`(\w+)`", old), re.findall(r"`(\w+)`", new)))
    assert documented == DEPRECATED_KEYS
    for ex in exchanges[:200]:
        record = exchange_record(ex)
        assert record["request_size"] == record["request_bytes"]
        assert record["response_size"] == record["response_bytes"]
        assert abs(record["ts"] - record["ts_ns"] / 1e9) < 1e-6
        assert sorted(record["errors"]) == record["error_codes"] or (ex.api == "ApiVersions" and not record["error_codes"])


def test_old_names_are_gone_from_parquet_and_new_ones_everywhere(parquet):
    assert "latency_ns" not in parquet.column_names and "request_size" not in parquet.column_names


def test_the_kinds_table_is_the_registry():
    rows = _table("## Kinds")
    assert [(r[0], r[1], None if r[2] == "-" else r[2], r[3]) for r in rows] == \
        [(k.name, k.subject, k.blames, k.text) for k in KINDS.values()]


def test_every_documented_fact_has_a_unit_that_matches_its_name():
    for name, fact in FACTS.items():
        if name.endswith("ts_ns"):
            assert fact["unit"] == "epoch ns", name
        elif name.endswith("_ms"):
            assert fact["unit"] == "ms", name
        elif name.endswith("_bytes"):
            assert fact["unit"] == "bytes", name
    assert not [n for n in FACTS if re.search(r"_(size|ns|s)$", n) and not n.endswith("ts_ns")]
