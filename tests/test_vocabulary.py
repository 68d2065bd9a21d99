"""One vocabulary: each fact an exchange shares between JSON Lines, the Parquet `exchanges` table, the
Spark data source and the stats document has one name there, and the same value (so the same unit); every key of
the stats document is declared once (kwire.vocabulary.STATS_DOCUMENT), in the vocabulary's units, and the
documents of every committed capture hold exactly the declared keys, with the declared types.

kwire/vocabulary.py is the statement of the facts and metrics (docs/vocabulary.md's tables of them are generated
from it: scripts/gen_vocabulary.py), docs/vocabulary.md of the kinds and deprecated names; what each output writes
is taken from the output itself: JSON Lines objects from `exchange_record`, the
Parquet table written with pyarrow from the rows `kwire spark --out` gathers and read back, the data
source's declared columns, the stats document's exchange lists. (tests/spark/test_source.py reads a
real DataFrame of the data source against JSON Lines.)
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from kwire.analytics import Aggregator
from kwire.analytics.facts import exchange_row
from kwire.kafka import pairing
from kwire.outcomes import KINDS
from kwire.pipeline import analyze_files
from kwire.render.jsonl import DEPRECATED_KEYS, exchange_record
from kwire.vocabulary import (EXCHANGE_FACTS, JSONL, METRIC_LIST, PARQUET, PARTITION_TABLE, SHAPES, STATS,
                              STATS_DOCUMENT, segments, stats_keys)

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


def test_the_page_holds_the_tables_the_vocabulary_makes():
    import importlib.util

    spec = importlib.util.spec_from_file_location("gen_vocabulary", ROOT / "scripts" / "gen_vocabulary.py")
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    assert gen.generated(DOC) == DOC, "docs/vocabulary.md is stale: run python scripts/gen_vocabulary.py"
    documented = {row[0] for row in _table("## The facts of an exchange")}
    assert documented == set(FACTS)


def test_partition_columns_are_the_declared_facts(exchanges):
    from kwire.analytics.facts import partition_rows
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
JSON_TYPES = {dict: ("object", "map"), list: ("list",), str: ("string",), bool: ("bool",), int: ("int",),
              float: ("float",)}
# A name's suffix says its unit (docs/vocabulary.md, "Units"); Kafka's own instants keep Kafka's name.
SUFFIX_UNITS = (("_timestamp_ms", "epoch ms"), ("ts_ns", "epoch ns"), ("_ms", "ms"), ("_bytes", "bytes"))


def _trie() -> dict:
    root: dict = {}
    for path in KEYS:
        node = root
        for step in segments(path):
            node = node.setdefault(step, {})
        node[None] = path
    return root


TRIE = _trie()


def _child(node: dict, key: str) -> tuple[dict | None, str | None]:
    """The declared node of a dict's `key` under `node`: its own, else the map's `<name>` (and that name)."""
    if key in node:
        return node[key], None
    wild = next((step for step in node if step is not None and step.startswith("<")), None)
    return (node[wild], wild) if wild else (None, None)


def walk(value, node=TRIE, where: str = "", bound: dict | None = None):
    """(declared path or None, concrete path, value, the map keys bound on the way, the dict holding it) of every
    value of a document, depth first; None where no declaration matches (and nothing below it is walked)."""
    bound = bound or {}
    if isinstance(value, dict):
        for key, item in value.items():
            child, wild = _child(node, key)
            here = f"{where}.{key}" if where else key
            if child is None:
                yield None, here, item, bound, value
                continue
            inner = dict(bound, **{wild: key}) if wild else bound
            yield child[None], here, item, inner, value
            yield from walk(item, child, here, inner)
    elif isinstance(value, list):
        child = node.get("[]")
        for item in value:
            if child is None:
                yield None, where + "[]", item, bound, None
                break
            yield child[None], where + "[]", item, bound, None
            yield from walk(item, child, where + "[]", bound)


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
        for path, here, value, _, _ in walk(doc):
            if path is None:
                problems.add(f"{here} ({name}): not declared in kwire/vocabulary.py")
                continue
            key = KEYS[path]
            if value is None:
                if not key.nullable:
                    problems.add(f"{path}: null ({name}), declared not nullable")
            elif not set(JSON_TYPES[type(value)]) & set(key.type.split("|")):
                problems.add(f"{path}: a {type(value).__name__} ({name}), declared {key.type}")
    assert not problems, "\n".join(sorted(problems)[:50])


def _shown(documents) -> set[str]:
    return {path for doc in documents.values() for path, *_ in walk(doc) if path is not None}


def test_every_declared_key_shows_in_a_committed_capture_unless_rare(documents):
    shown = _shown(documents)
    unseen = [path for path, key in KEYS.items() if path not in shown and not key.rare]
    assert not unseen, f"declared, but no committed capture's document has them (declare them rare, with why): {unseen}"
    # a rare key every place of shows is not rare (a shape's key is rare when one of its places shows it never)
    places: dict[str, list[bool]] = {}
    for key in STATS_DOCUMENT:
        for inner in SHAPES.get(key.shape, ()):
            if inner.rare:
                places.setdefault(f"*{key.shape}*.{inner.path}", []).append(f"{key.path}.{inner.path}" in shown)
    stale = [path for path, key in KEYS.items() if key.rare and path in shown and not _in_shape(path)]
    stale += [name for name, seen in places.items() if all(seen)]
    assert not stale, f"declared rare, yet shown: {stale}"


def _in_shape(path: str) -> bool:
    return any(path.startswith(key.path + ".") for key in STATS_DOCUMENT if key.shape)


def test_every_declared_unit_matches_its_name():
    for path, key in KEYS.items():
        steps = [s for s in segments(path) if s != "[]" and not s.startswith("<")]
        name, parent = key.name, steps[-2] if len(steps) > 1 else ""
        assert key.unit not in ("s", "epoch s") or key.deprecated, f"{path}: in seconds, and not deprecated"
        if key.deprecated:
            continue  # the old names are the drift (kept for one release; their values are checked below)
        for suffix, unit in SUFFIX_UNITS:
            if name.endswith(suffix):
                assert key.unit == unit, (path, key.unit, unit)
                break
        for suffix, unit in SUFFIX_UNITS:
            if key.unit == unit:  # the unit is said by the name, or by the object's name it is in (latency_ms.p50)
                assert name.endswith(suffix) or parent.endswith(suffix), (path, key.unit)
        assert not re.search(r"_(size|ns|s)$", name) or name.endswith(("ts_ns", "_per_s")), path
        assert not name.endswith("_per_s") or key.unit.endswith("per s"), path


def test_every_finding_key_is_declared():
    """The keys the finding kinds register (kwire.analytics.finding_kinds) are each declared under `findings[]`,
    so a kind's new key needs its unit and meaning before any capture shows it."""
    from kwire.analytics.finding_kinds import KINDS

    declared = {path.split(".", 1)[1] for path in KEYS if path.startswith("findings[].") and path.count(".") == 1}
    registered = {key for kind in KINDS.values() for key in kind.keys}
    assert registered <= declared, sorted(registered - declared)


def test_a_deprecated_key_sits_beside_its_replacement():
    for path, key in KEYS.items():
        if not key.deprecated:
            continue
        new = KEYS.get(key.deprecated)
        assert new is not None and not new.deprecated, path
        parent = _parent(path)
        assert _parent(key.deprecated) == parent or KEYS[parent].deprecated, (path, key.deprecated)


def _old_value(old_unit: str, new_unit: str, new):
    """What a deprecated key in `old_unit` holds, from its replacement's value `new` in `new_unit`."""
    if new is None or old_unit == new_unit:
        return new
    if isinstance(new, list):
        return [_old_value(old_unit, new_unit, v) for v in new]
    scale = {("epoch s", "epoch ns"): 1e9, ("s", "ms"): 1e3}[(old_unit, new_unit)]
    return new / scale


def _close(old, expected, unit: str) -> bool:
    if isinstance(old, list):
        return isinstance(expected, list) and len(old) == len(expected) and all(
            _close(a, b, unit) for a, b in zip(old, expected))
    if old is None or expected is None or type(old) is not float and type(expected) is not float:
        return old == expected or (type(old) is int and old == int(expected // 1))
    # epoch seconds to the µs (or finer), seconds to the ms
    return abs(old - expected) <= (1e-6 if unit == "epoch s" else 5e-4 + 1e-9)


def _parent(path: str) -> str:
    return path[:-2] if path.endswith("[]") else path.rsplit(".", 1)[0] if "." in path else ""


def _beside(path: str) -> bool:
    """A deprecated key beside its replacement (not a key or the items inside a deprecated object or list)."""
    parent = _parent(path)
    return KEYS[path].deprecated and not (parent and KEYS[parent].deprecated)


def test_deprecated_keys_hold_their_replacement_in_the_old_unit(documents):
    checked = set()
    for name, doc in documents.items():
        for path, here, value, _, holder in walk(doc):
            if path is None or not _beside(path):
                continue
            key, new = KEYS[path], KEYS[KEYS[path].deprecated]
            expected = _old_value(key.unit, new.unit, holder[key.deprecated.rsplit(".", 1)[-1]])
            assert _close(value, expected, key.unit), (name, here, value, expected)
            checked.add(path)
    assert checked == {path for path in KEYS if _beside(path)}


def _value_at(doc: dict, path: str, bound: dict):
    value = doc
    for step in segments(path):
        value = value[bound.get(step, step)]
    return value


def test_a_key_declared_the_same_as_another_is_equal_to_it(documents):
    checked = set()
    for doc in documents.values():
        for path, _, value, bound, _ in walk(doc):
            if path and KEYS[path].same_as:
                assert value == _value_at(doc, KEYS[path].same_as, bound), path
                checked.add(path)
    assert checked == {p for p, k in KEYS.items() if k.same_as}


def without_deprecated(value, node=TRIE):
    """A document with every deprecated key taken out (what it will be once they are removed)."""
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            child, _ = _child(node, key)
            if child is not None and KEYS[child[None]].deprecated:
                continue
            out[key] = without_deprecated(item, child) if child is not None else item
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
