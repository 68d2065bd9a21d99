"""Nulls wherever a body can hold one, every api and version (issue 49): tests/hostile3/nulls.py's captures
through every output, with no traceback.

- declared: each field a schema declares nullable null, one at a time and all at once; the consumer-protocol
  messages inside the group apis with each field null; the request header's client id null. Through
  `inspect` (lines, -V, -V --records, --json, --json --records), `stats` (tables, --json, --html, --metrics)
  and what `live` makes (dashboard, metrics, findings log).
- lenient: each string, bytes and array field a schema does not declare nullable sent null all the same
  (kwire names the null, outcome null_not_nullable at that field, and shows the body read with it as null: a
  SyncGroup assignment naming a null member id, a config with a null name), through the outputs that read
  fields (JSON Lines and everything `stats` and `live` count).
The bodies must decode (a null is not a malformed body), so the analytics really meet the nulls.
"""

from __future__ import annotations

import json

import pytest

from kwire.codec.schemas import all_schemas
from tests.hostile3.nulls import KINDS, null_exchanges, write_capture
from tests.hostile3.outputs import command, files_of, live_outputs

DECLARED = ("nullable", "embedded", "header")


@pytest.fixture(scope="module")
def declared(tmp_path_factory):
    path = tmp_path_factory.mktemp("nulls") / "declared.pcap"
    return str(path), write_capture(path, kinds=DECLARED)


@pytest.fixture(scope="module")
def lenient(tmp_path_factory):
    path = tmp_path_factory.mktemp("nulls") / "lenient.pcap"
    return str(path), write_capture(path, kinds=("lenient",))


def _lines(path: str, *extra: str) -> list[dict]:
    out, _ = command("inspect", "--json", *extra, path)
    return [json.loads(line) for line in out.splitlines()]


def _all_decoded(records: list[dict], expected: int, kinds=("decoded",)) -> None:
    assert len(records) == expected
    failed = [(r["api"], r["api_version"]) for r in records
              if r["request_outcome"] not in kinds or r["response_outcome"] not in kinds]
    # ControlledShutdown v0 has request header v0 (no client id): the generator writes v1's header.
    assert set(failed) <= {("ControlledShutdown", 0)}, failed[:10]


def _stats_document(path: str) -> dict:
    out, _ = command("stats", "--json", "-j", "0", path)
    return json.loads(out)


def test_declared_nulls_through_every_output(declared, tmp_path):
    path, n = declared
    _all_decoded(_lines(path), n)
    _lines(path, "--records")
    for args in (("inspect",), ("inspect", "-V"), ("inspect", "-V", "--records")):
        out, _ = command(*args, path)
        assert out.count(b"\n") >= n
    assert _stats_document(path)["totals"]["exchanges"] == n
    outputs = files_of(path, tmp_path) | live_outputs(path)
    assert b"<svg" in outputs["stats --html"] and b"kwire_exchanges_total" in outputs["live --metrics"]


def test_lenient_nulls_through_the_analytics(lenient, tmp_path):
    path, n = lenient
    _all_decoded(_lines(path), n, ("decoded", "null_not_nullable"))
    document = _stats_document(path)
    assert document["totals"]["exchanges"] == n
    for group in document["groups"].values():  # a null member id names no member
        assert all(type(m) is str for m in group["members"])
    files_of(path, tmp_path)
    live_outputs(path)


def _wire_path(label_path: str) -> str:
    """A label's path ("Topics.0.Name", "Members.0") as the decoder names the field ("Topics[].Name", "Members[]")."""
    return label_path.replace(".0.", "[].").removesuffix(".0") + ("[]" if label_path.endswith(".0") else "")


def test_each_lenient_null_is_named_at_its_field(lenient):
    """Every body with one null Kafka's schema does not allow is null_not_nullable at that very field (the
    label says which); the other side of the exchange decodes."""
    path, _ = lenient
    labels: dict = {}
    per_api: dict = {}
    for api_key, label, _, _ in null_exchanges(kinds=("lenient",)):
        corr = per_api[api_key] = per_api.get(api_key, 0) + 1
        labels[(api_key, corr)] = label.split()
    checked = 0
    for line in _lines(path):
        _, _, side, *rest = labels[(line["api_key"], line["correlation_id"])]
        if side == "all" or (line["api"], line["api_version"]) == ("ControlledShutdown", 0):
            continue
        outcome = line[f"{side}_outcome"]
        other = line["response_outcome" if side == "request" else "request_outcome"]
        assert (outcome, other) == ("null_not_nullable", "decoded"), (line["api"], line["api_version"], rest)
        checked += 1
    assert checked > 1000
    from kwire.pipeline import analyze_files
    for ex in analyze_files([path]):
        _, _, side, *rest = labels[(ex.api_key, ex.correlation_id)]
        if side != "all" and (ex.api, ex.api_version) != ("ControlledShutdown", 0):
            outcome = ex.request_outcome if side == "request" else ex.response_outcome
            assert outcome.field == _wire_path(rest[0]), (ex.api, ex.api_version, rest)


def test_null_member_id_in_a_sync_group_assignment(tmp_path):
    """The issue's case: stats ended in TypeError sorting a null member id with the others."""
    path = tmp_path / "sync.pcap"
    write_capture(path, kinds=("lenient",), apis=(14,))
    document = _stats_document(str(path))
    assert document["groups"]["group-a"]["members"]


def test_every_api_and_version_is_covered():
    seen = {(api_key, int(label.split()[0][1:])) for api_key, label, _, _ in null_exchanges(kinds=KINDS)}
    schemas = all_schemas()
    wanted = set()
    for (api_key, kind), schema in schemas.items():
        if kind == "request" and (api_key, "response") in schemas:
            wanted |= {(api_key, v) for v in range(schema.valid.lo, schema.valid.hi + 1)}
    assert seen == wanted
