"""One vocabulary: each fact an exchange shares between JSON Lines, the Parquet `exchanges` table, the
Spark data source and the stats document has one name there, and the same value (so the same unit); every key of
the stats document is declared once (kwire.vocabulary.STATS_DOCUMENT), in the vocabulary's units, and the
documents of every committed capture hold exactly the declared keys, with the declared types.

kwire/vocabulary.py is the statement of the facts and metrics (docs/vocabulary.md's tables of them are generated
from it: scripts/gen_vocabulary.py), docs/vocabulary.md of the kinds and deprecated names; what each output writes
is taken from the output itself: JSON Lines objects from `exchange_record`, the
Parquet table written with pyarrow from the rows `kwire spark --out` gathers and read back, the data
source's declared columns, the stats document's exchange lists. (tests/spark/test_source.py reads a
real DataFrame of the data source against JSON Lines.) Only the tests of the Parquet table and the Spark schemas
need pyarrow (and pyspark): they alone are skipped without them.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from kwire.analytics import Aggregator
from kwire.native.exchange_facts import exchange_row
from kwire.native import kafka_pairing as pairing
from kwire.outcomes import KINDS
from kwire.pipeline import analyze_files
from kwire.render.jsonl import DEPRECATED_KEYS, exchange_record
from kwire.vocabulary import (EXCHANGE_FACTS, JSONL, METRIC_LIST, PARQUET, PARTITION_TABLE, SHAPES, STATS,
                              STATS_DOCUMENT, segments, stats_keys)
from tests.vocabulary_walk import (beside, child, deprecated_checked, misplaced, shown, trie, type_problems,
                                   unit_problems, walk)

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


FACTS = {f.name: dict(unit=f.unit, jsonl=JSONL in f.outputs, parquet=PARQUET in f.outputs, stats=STATS in f.outputs)
         for f in EXCHANGE_FACTS}


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
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
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
    pytest.importorskip("pyspark")
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


def test_the_page_holds_the_tables_the_vocabulary_makes():
    import importlib.util

    spec = importlib.util.spec_from_file_location("gen_vocabulary", ROOT / "scripts" / "gen_vocabulary.py")
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    assert gen.generated(DOC) == DOC, "docs/vocabulary.md is stale: run python scripts/gen_vocabulary.py"
    documented = {row[0] for row in _table("## The facts of an exchange")}
    assert documented == set(FACTS)


def test_partition_columns_are_the_declared_facts(exchanges):
    pytest.importorskip("pyarrow")
    pytest.importorskip("pyspark")
    from kwire.native.exchange_facts import partition_rows
    from kwire.spark.results import ARROW_PARTITIONS
    from kwire.spark.schemas import PARTITION_SCHEMA

    names = [f.name for f in PARTITION_TABLE]
    assert list(ARROW_PARTITIONS.names) == names == [f.name for f in PARTITION_SCHEMA.fields]
    assert [f.nullable for f in PARTITION_SCHEMA.fields] == [f.nullable for f in PARTITION_TABLE]
    rows = [row for ex in exchanges for row in partition_rows(ex)]
    assert rows and all(list(row.keys()) == names[:len(row)] for row in rows)
    for fact in PARTITION_TABLE:
        if not fact.nullable and fact.name in rows[0]:
            assert all(row[fact.name] is not None for row in rows), fact.name


def test_the_exchange_schemas_state_the_declared_nullability(parquet, exchanges):
    pytest.importorskip("pyspark")
    from kwire.spark.schemas import EXCHANGE_SCHEMA

    declared = {f.name: f.nullable for f in EXCHANGE_FACTS}
    assert {f.name: f.nullable for f in EXCHANGE_SCHEMA.fields} == {n: declared[n] for n in parquet.column_names}
    for name in parquet.column_names:
        if not declared[name]:
            assert parquet.column(name).null_count == 0, name


def test_every_metric_family_written_is_declared_as_written(tmp_path):
    """`stats --metrics` over real captures and the service's own families: each family's name, type, HELP and
    label names are its declaration in kwire.vocabulary, and every declared family is written by one
    of them (the queue's, the kernel's and the live gauges only live: their declarations are checked alone)."""
    from prometheus_client import CollectorRegistry, generate_latest
    from prometheus_client.parser import text_string_to_metric_families

    from kwire.live.metric_families import service_families
    from tests.hostile3.outputs import command

    declared = {m.exposed if m.type != "counter" else m.name: m for m in METRIC_LIST}
    metrics = tmp_path / "metrics.prom"
    command("stats", "-j", "0", "--metrics", str(metrics), *map(str, CAPTURES[:2]))
    written = list(text_string_to_metric_families(metrics.read_text()))

    class Service:
        def collect(self):
            return service_families({"answered": 1}, 1, 256)

    registry = CollectorRegistry()
    registry.register(Service())
    written += list(text_string_to_metric_families(generate_latest(registry).decode()))
    seen = set()
    for family in written:
        metric = declared[family.name]
        # (the text format has no UNIT line: a unit ends its name, Metric checks)
        assert (family.type, family.documentation) == (metric.type, metric.help), family
        labels = {k for s in family.samples for k in s.labels if k != "le"}
        assert labels <= set(metric.labels), (family.name, labels)
        seen.add(metric.name)
    live_only = {"kwire_queue_dropped_exchanges", "kwire_queue_dropped_packets", "kwire_kernel_drops",
                 "kwire_tcp_connections_open", "kwire_requests_in_flight", "kwire_figures_lag_max_seconds"}
    assert {m.name for m in METRIC_LIST} - seen == live_only


def test_every_declared_metric_is_in_the_operators_page():
    text = (ROOT / "docs" / "metrics.md").read_text()
    assert [m.exposed for m in METRIC_LIST if m.exposed not in text] == []


# -- the stats document -------------------------------------------------------------------------------------------

KEYS = stats_keys()
# Every committed capture (and the TLS ones with their key logs): the documents the declaration is checked on.
COMMITTED = sorted(p for p in (ROOT / "captures").glob("**/*") if p.name.endswith((".pcap", ".pcapng", ".pcap.gz")))
TRIE = trie(KEYS)


@pytest.fixture(scope="module")
def documents() -> dict[str, dict]:
    """capture -> `kwire stats --json` of it (in process: the command's own output, read back)."""
    from click.testing import CliRunner

    from kwire.cli.main import cli

    out = {}
    for capture in COMMITTED:
        keys = capture.with_name(capture.name + ".keys")
        args = ["stats", "--json", "--no-summary", "-j", "0", *(["--keylog", str(keys)] if keys.exists() else []),
                str(capture)]
        result = CliRunner().invoke(cli, args)
        assert result.exit_code == 0, (capture, result.output[-2000:])
        out[str(capture.relative_to(ROOT))] = json.loads(result.stdout)
    return out


def test_the_committed_captures_are_all_read():
    names = {p.relative_to(ROOT).parts[1] for p in COMMITTED if len(p.relative_to(ROOT).parts) > 2}
    assert {"problems", "tls", "admin", "changes", "kraft"} <= names and len(COMMITTED) >= 70
    assert all(p.with_name(p.name + ".keys").exists() for p in COMMITTED if p.parent.name == "tls")


def test_every_key_of_the_stats_documents_is_declared_with_its_type(documents):
    problems = set()
    for name, doc in documents.items():
        problems |= type_problems(name, doc, KEYS, TRIE)
    assert not problems, "\n".join(sorted(problems)[:50])


def test_every_declared_key_shows_in_a_committed_capture_unless_rare(documents):
    seen = shown(documents.values(), TRIE)
    unseen = [path for path, key in KEYS.items() if path not in seen and not key.rare]
    assert not unseen, f"declared, but no committed capture's document has them (declare them rare, with why): {unseen}"
    # a rare key every place of shows is not rare (a shape's key is rare when one of its places shows it never)
    places: dict[str, list[bool]] = {}
    for key in STATS_DOCUMENT:
        for inner in SHAPES.get(key.shape, ()):
            if inner.rare:
                places.setdefault(f"*{key.shape}*.{inner.path}", []).append(f"{key.path}.{inner.path}" in seen)
    stale = [path for path, key in KEYS.items() if key.rare and path in seen and not _in_shape(path)]
    stale += [name for name, seen in places.items() if all(seen)]
    assert not stale, f"declared rare, yet shown: {stale}"


def _in_shape(path: str) -> bool:
    return any(path.startswith(key.path + ".") for key in STATS_DOCUMENT if key.shape)


def test_every_declared_unit_matches_its_name():
    assert unit_problems(KEYS) == []


def test_every_finding_key_is_declared():
    """The keys the finding kinds register (kwire.analytics.finding_kinds) are each declared under `findings[]`,
    so a kind's new key needs its unit and meaning before any capture shows it."""
    from kwire.analytics.finding_kinds import KINDS

    declared = {path.split(".", 1)[1] for path in KEYS if path.startswith("findings[].") and path.count(".") == 1}
    registered = {key for kind in KINDS.values() for key in kind.keys}
    assert registered <= declared, sorted(registered - declared)


def test_a_deprecated_key_sits_beside_its_replacement():
    assert misplaced(KEYS) == []


def test_deprecated_keys_hold_their_replacement_in_the_old_unit(documents):
    checked = set()
    for name, doc in documents.items():
        checked |= deprecated_checked(name, doc, KEYS, TRIE)
    assert checked == {path for path in KEYS if beside(path, KEYS)}


def _value_at(doc: dict, path: str, bound: dict):
    value = doc
    for step in segments(path):
        value = value[bound.get(step, step)]
    return value


def test_a_key_declared_the_same_as_another_is_equal_to_it(documents):
    checked = set()
    for doc in documents.values():
        for path, _, value, bound, _ in walk(doc, TRIE):
            if path and KEYS[path].same_as:
                assert value == _value_at(doc, KEYS[path].same_as, bound), path
                checked.add(path)
    assert checked == {p for p, k in KEYS.items() if k.same_as}


def without_deprecated(value, node=TRIE):
    """A document with every deprecated key taken out (what it will be once they are removed)."""
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            below, _ = child(node, key)
            if below is not None and KEYS[below[None]].deprecated:
                continue
            out[key] = without_deprecated(item, below) if below is not None else item
        return out
    if isinstance(value, list):
        return [without_deprecated(item, node["[]"]) for item in value] if "[]" in node else value
    return value


def test_the_renderers_read_no_deprecated_key(documents):
    """The terminal tables, the HTML report, the dashboard's findings and groups, the findings log and the metrics of
    findings are the same made from a document without its deprecated keys: they read the new names."""
    import io

    from rich.console import Console

    from kwire.live import findings_log, metric_families
    from kwire.live.analysis_rows import analysis_rows, end_to_end_rows
    from kwire.render.html_report import html_report
    from kwire.render.stats_view import stats_view

    def text(doc):
        console = Console(file=io.StringIO(), width=160, color_system=None)
        console.print(stats_view(doc))
        return console.file.getvalue()

    def live(doc):
        make = metric_families._Make(None)
        metric_families._findings(make, doc["findings"])
        events = findings_log.FindingsTracker().update(doc["findings"], None, findings_log.REPLAY_FINISHED)
        return (analysis_rows(doc["findings"], doc["groups"]), end_to_end_rows(doc["end_to_end"]),
                [(f.name, f.samples) for f in make.out], [(e["event"], e["id"]) for e in events])

    lean_docs = 0
    for name, doc in documents.items():
        lean = without_deprecated(doc)
        lean_docs += lean != doc
        assert text(lean) == text(doc), name
        assert html_report(lean, sources=[name]) == html_report(doc, sources=[name]), name
        assert live(lean) == live(doc), name
    assert lean_docs == len(documents)
