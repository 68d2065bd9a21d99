"""Every key documented in docs/ exists in the output it documents, and every key of that output is
documented: the JSON Lines of `kwire inspect --json` (docs/jsonl.md), the document of `kwire stats --json`
(docs/stats-document.md, docs/groups.md, docs/findings.md), `kwire live --json` (docs/live.md), and the
Parquet schemas (docs/parquet.md). The outputs come from the commands themselves, run on the committed
captures (real traffic: the problem recordings hold every finding kwire knows); the documented keys are
the tables and paragraphs marked `<!-- keys: NAME -->` (tests/docs/pages.py)."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from collections import defaultdict

import pytest
from click.testing import CliRunner

from tests.docs.pages import ROOT, all_documented_keys

CAPTURES = sorted(str(p) for p in (ROOT / "captures").glob("*.pcap*") if not p.name.endswith(".log"))
PROBLEMS = sorted(str(p) for p in (ROOT / "captures" / "problems").glob("*.pcap.gz"))
# admin recordings and the scripted KRaft sequence: the changes, quorum and their findings
ADMIN = sorted(str(p) for d in ("changes", "kraft") for p in (ROOT / "captures" / d).glob("*.pcap"))
TLS = ROOT / "captures" / "tls" / "py-tls13-aes128gcm.pcap"
COMMON_FINDING_KEYS = "stats.finding"


@pytest.fixture(scope="module")
def documented():
    return all_documented_keys()


def _run(*args) -> str:
    from kwire.cli.main import cli

    result = CliRunner().invoke(cli, list(args))
    assert result.exit_code == 0, (args, result.stderr[-2000:], result.exception)
    return result.stdout


def _compare(documented: dict, seen: dict[str, set], names) -> None:
    problems = []
    for name in names:
        doc, out = documented.get(name, set()), seen.get(name, set())
        if doc - out:
            problems.append(f"{name}: documented, not in the output: {sorted(doc - out)}")
        if out - doc:
            problems.append(f"{name}: in the output, not documented: {sorted(out - doc)}")
    assert not problems, "\n".join(problems)


# -- kwire inspect --json -------------------------------------------------------------------------

@pytest.fixture(scope="module")
def jsonl_keys() -> dict[str, set]:
    seen: dict[str, set] = defaultdict(set)
    out = _run("inspect", "--json", "--no-summary", "-j", "0", *CAPTURES, *PROBLEMS)
    for line in out.splitlines():
        record = json.loads(line)
        seen["jsonl"].update(record)
        for row in record.get("lag") or ():
            seen["jsonl.lag"].update(row)
        for row in record.get("share") or ():
            seen["jsonl.share"].update(row)
        if "fetch" in record:
            seen["jsonl.fetch"].update(record["fetch"])
    return seen


def test_jsonl_keys(documented, jsonl_keys):
    _compare(documented, jsonl_keys, ("jsonl", "jsonl.lag", "jsonl.fetch", "jsonl.share"))


# -- kwire stats --json ---------------------------------------------------------------------------

def _figures(seen, figures: dict) -> None:
    seen["stats.figures"].update(figures)
    seen["stats.latency_ms"].update(figures["latency_ms"])
    seen["stats.waits"].update(figures["waits"])


def _document_keys(seen, doc: dict) -> None:
    seen["stats"].update(doc)
    seen["stats.span"].update(doc["span"])
    for figures in [doc["totals"], *doc["client_ids"].values(), *doc["brokers"].values()]:
        _figures(seen, figures)
    for entry in doc["apis"].values():
        seen["stats.api"].update(set(entry) - set(doc["totals"]))
        _figures(seen, {k: v for k, v in entry.items() if k in doc["totals"]})
        for figures in entry["versions"].values():
            _figures(seen, figures)
    for partitions in doc["partitions"].values():
        for entry in partitions.values():
            seen["stats.partition"].update(entry)
    for entry in doc["share_groups"].values():
        seen["stats.share_group"].update(entry)
    seen["stats.unanswered"].update(doc["unanswered"])
    for row in doc["slowest"] + doc["unanswered"]["first"]:
        seen["stats.exchange"].update(row)
    seen["stats.timeline"].update(doc["timeline"])
    seen["stats.changes"].update(doc["changes"])
    for entry in doc["changes"]["entries"]:
        seen["stats.change"].update(entry)
    if doc["quorum"] is not None:
        seen["stats.quorum"].update(doc["quorum"])
        for broker in doc["quorum"]["brokers"].values():
            seen["stats.quorum.broker"].update(broker)
    seen["stats.end_to_end"].update(doc["end_to_end"])
    for row in doc["end_to_end"]["consumers"]:
        seen["stats.end_to_end.consumer"].update(row)
    for row in doc["end_to_end"]["partitions"]:
        seen["stats.end_to_end.partition"].update(row)
    for row in doc["end_to_end"]["commits"]:
        seen["stats.end_to_end.commit"].update(row)
    for series in doc["end_to_end"]["timeline"]["latency"] + doc["end_to_end"]["timeline"]["time_lag"]:
        seen["stats.end_to_end.series"].update(series)
    seen["stats.tls"].update(doc["tls"])
    for row in doc["tls"]["list"]:
        seen["stats.tls.connection"].update(row)
    for group in doc["groups"].values():
        seen["stats.group"].update(group)
        for generation in group["generations"]:
            seen["stats.generation"].update(generation)
            for member in generation["members"]:
                seen["stats.generation.member"].update(member)
        for member in group["members"].values():
            seen["stats.member"].update(member)
    for finding in doc["findings"]:
        seen["findings"].add(finding["kind"])
        seen[f"finding.{finding['kind']}"].update(finding)


@pytest.fixture(scope="module")
def stats_keys() -> dict[str, set]:
    seen: dict[str, set] = defaultdict(set)
    for capture in CAPTURES + PROBLEMS + ADMIN:  # one by one: each problem recording holds its own finding
        _document_keys(seen, json.loads(_run("stats", "--json", "--no-summary", "-j", "0", capture)))
    _document_keys(seen, json.loads(_run("stats", "--json", "--no-summary", "-j", "0",
                                         "--keylog", f"{TLS}.keys", str(TLS))))
    common = set.intersection(*(seen[f"finding.{kind}"] for kind in seen["findings"]))
    seen[COMMON_FINDING_KEYS] = common
    for kind in seen["findings"]:
        seen[f"finding.{kind}"] -= common
    return seen


STATS_TABLES = ("stats", "stats.span", "stats.figures", "stats.latency_ms", "stats.waits", "stats.api",
                "stats.partition", "stats.share_group", "stats.unanswered", "stats.exchange", "stats.timeline",
                "stats.tls", "stats.tls.connection", "stats.group", "stats.generation", "stats.generation.member",
                "stats.member", "stats.changes", "stats.change", "stats.quorum", "stats.quorum.broker",
                "stats.end_to_end", "stats.end_to_end.consumer", "stats.end_to_end.partition", "stats.end_to_end.commit",
                "stats.end_to_end.series", COMMON_FINDING_KEYS)


def test_stats_document_keys(documented, stats_keys):
    _compare(documented, stats_keys, STATS_TABLES)


def _emitted_kinds() -> set[str]:
    """The kinds the code can emit: the first argument of every finding(...) call in kwire/analytics."""
    kinds = set()
    for path in (ROOT / "kwire" / "analytics").glob("findings*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Call) and getattr(node.func, "id", None) == "finding" and node.args
                    and isinstance(node.args[0], ast.Constant)):
                kinds.add(node.args[0].value)
    return kinds


def test_every_finding_kind_is_documented_with_its_keys(documented, stats_keys):
    documented_kinds = {name.split(".", 1)[1] for name in documented if name.startswith("finding.")}
    emitted = _emitted_kinds()
    assert emitted, "no finding(...) call found: has the finders' layout changed?"
    assert documented_kinds == emitted, (f"documented, never emitted: {sorted(documented_kinds - emitted)}; "
                                         f"emitted, not documented: {sorted(emitted - documented_kinds)}")
    unseen = emitted - stats_keys["findings"]
    assert not unseen, f"no committed capture shows {sorted(unseen)}: its keys cannot be checked"
    _compare(documented, stats_keys, [f"finding.{kind}" for kind in sorted(emitted)])


def test_every_documented_table_is_checked(documented):
    """A `<!-- keys: NAME -->` mark no test reads would check nothing."""
    checked = set(STATS_TABLES) | {"jsonl", "jsonl.lag", "jsonl.fetch", "jsonl.share", "live",
                                   "parquet.exchanges", "parquet.partitions"}
    checked |= {name for name in documented if name.startswith("finding.")}
    assert set(documented) <= checked, f"marked but not checked: {sorted(set(documented) - checked)}"


# -- kwire live --json ----------------------------------------------------------------------------

def test_live_document_keys(documented):
    capture = ROOT / "captures" / "share-consumer.pcap"
    run = subprocess.run([sys.executable, "-m", "kwire", "live", "--replay", str(capture), "--speed", "0", "--json"],
                         cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr[-2000:]
    _compare(documented, {"live": set(json.loads(run.stdout))}, ("live",))


# -- Parquet --------------------------------------------------------------------------------------

def test_parquet_columns(documented):
    pytest.importorskip("pyspark")
    from kwire.spark.schemas import EXCHANGE_SCHEMA, PARTITION_SCHEMA

    _compare(documented, {"parquet.exchanges": set(EXCHANGE_SCHEMA.fieldNames()),
                          "parquet.partitions": set(PARTITION_SCHEMA.fieldNames())},
             ("parquet.exchanges", "parquet.partitions"))
