"""Real admin traffic: four admin clients (confluent-kafka, kafka-python, aiokafka, KafkaJS) doing an
operator's work against Tansu and librdkafka's mock cluster (captures/admin, scripts/record_admin.py),
each operation's result as the client reported it in CAPTURE.truth.jsonl.

On every capture:
- every exchange has a decoded request body, and every answered one a decoded response body; the only
  decode errors are the broker answers listed in BROKEN, each with why, where kwire says the body
  breaks, and that kio cannot read it either (nor could the client: its truth line is an error);
- every body kio reads, kwire reads the same, field by field, and to the same byte (a body with a null array
  Kafka's schema does not allow, which kio reads as null, as kwire's lenient decoder reads it: kwire's own
  stops there, null_not_nullable, as Kafka's readers do);
- the api keys the clients' successful operations imply are on the wire;
- what the clients report is in the decoded bodies: the topics they created (partitions, replication,
  configs), the ACL bindings they created with the names kwire gives the enum fields, the cluster id,
  the configs DescribeConfigs returned, the topic ids kafka-python was handed;
- the sensitive config values and SCRAM salts the clients sent are redacted in `kwire inspect --json`
  and shown with --show-secrets.
"""

from __future__ import annotations

import base64
import json
import uuid
from functools import cache
from pathlib import Path

import pytest

pytest.importorskip("kio.schema")

from click.testing import CliRunner  # noqa: E402

from kwire.cli.main import cli  # noqa: E402
from kwire.codec.compiler import decoder_for  # noqa: E402
from kwire.codec.overlay import sensitive_config  # noqa: E402
from kwire.codec.schemas import all_schemas, schema_for  # noqa: E402
from kwire.errors import NULL_NOT_NULLABLE, DecodeError, NullNotNullable  # noqa: E402
from kwire.model import NO_REQUEST, PAIRED  # noqa: E402
from kwire.pipeline import analyze_files  # noqa: E402
from kwire.outcomes import MALFORMED  # noqa: E402
from tests.codec.test_differential_kio import compare  # noqa: E402
from tests.codec.test_differential_kio_captures import bodies, kio_read  # noqa: E402

ADMIN = Path(__file__).resolve().parents[2] / "captures" / "admin"
CASES = sorted(ADMIN.glob("*.pcap"))
IDS = [p.name for p in CASES]

# Broker answers that are not Kafka's format: (broker, api key, versions, which requests) -> (the field
# kwire names in its decode error, the fault it names there (None: a length past the bytes), why). The clients'
# verdicts are in the truth files: each api here has at least one operation that failed on it.
BROKEN = {
    ("tansu", 30, (1,), "any"): ("Results", None, "CreateAcls: Tansu writes ThrottleTimeMs only, no Results array "
                                                  "(KafkaJS: RangeError)"),
    ("tansu", 30, (2, 3), "any"): ("Results", NULL_NOT_NULLABLE, "CreateAcls: ThrottleTimeMs, a null Results (0: Kafka's "
                                                      "array is not nullable) and no tag buffer (librdkafka: "
                                                      "'Received -1 acls', then aborts on an assertion in "
                                                      "rd_kafka_admin_response_parse; kafka-python times out)"),
    ("tansu", 50, (0,), "any"): ("Results", NULL_NOT_NULLABLE, "DescribeUserScramCredentials: ThrottleTimeMs, ErrorCode, a "
                                                    "null ErrorMessage, a null Results (not nullable) and no tag "
                                                    "buffer (librdkafka: 'Results length 0 is different from "
                                                    "future-map length 1' when it named users, an empty answer "
                                                    "when it asked for all; kafka-python times out)"),
    ("tansu", 9, (3,), "all topics"): ("Topics", None, "OffsetFetch v3 asking for all topics (Topics null): "
                                                 "ThrottleTimeMs and ErrorCode, no Topics array (aiokafka: the "
                                                 "connection is dropped)"),
}
OPERATIONS_OF = {30: {"create_acls"}, 50: {"describe_user_scram_credentials"}, 9: {"list_consumer_group_offsets"}}


def broken_entry(broker: str, ex):
    """The BROKEN key an exchange's answer falls under, or None."""
    for key in BROKEN:
        b, api_key, versions, which = key
        if (b, api_key) == (broker, ex.api_key) and ex.api_version in versions and (
                which == "any" or ex.request is not None and ex.request.get("Topics") is None):
            return key
    return None


# The api keys a successful operation puts on the wire (any one of them; clients pick).
IMPLIED = {
    "create_topics": {19}, "create_partitions": {37}, "delete_topics": {20}, "describe_cluster": {3, 60},
    "describe_topics": {3, 75}, "list_topics": {3}, "fetch_topic_metadata": {3}, "describe_topic_partitions": {75},
    "describe_configs": {32}, "incremental_alter_configs": {44}, "create_acls": {30}, "describe_acls": {29},
    "delete_acls": {31}, "produce": {0}, "consume_commit": {8}, "delete_records": {21}, "list_offsets": {2},
    "list_partition_offsets": {2}, "fetch_topic_offsets": {2}, "list_consumer_groups": {16}, "list_groups": {16},
    "describe_consumer_groups": {15, 69}, "describe_groups": {15, 69}, "list_consumer_group_offsets": {9},
    "list_group_offsets": {9}, "fetch_offsets": {9}, "alter_consumer_group_offsets": {8},
    "alter_group_offsets": {8}, "set_offsets": {8}, "delete_consumer_groups": {42}, "delete_groups": {42},
    "delete_group_offsets": {47}, "elect_leaders": {43}, "list_partition_reassignments": {46},
    "describe_log_dirs": {35}, "describe_producers": {61}, "list_transactions": {66}, "describe_features": {18},
    "describe_user_scram_credentials": {50}, "alter_user_scram_credentials": {51}, "find_coordinator": {10},
}


@cache
def truth(path: Path) -> tuple[dict, tuple[dict, ...]]:
    """(the recording's header, the operations) of a capture's truth file."""
    lines = [json.loads(line) for line in Path(str(path) + ".truth.jsonl").read_text().splitlines() if line]
    return lines[0]["recording"], tuple(lines[1:])


@cache
def exchanges(path: Path) -> tuple:
    return tuple(analyze_files([str(path)]))


def succeeded(op: dict) -> bool:
    """The client returned a result with no item failed (confluent-kafka: {"key": {"error": ...}})."""
    return "result" in op and not _has_item_error(op["result"])


def _has_item_error(value) -> bool:
    if isinstance(value, dict):
        if set(value) == {"error"} or value.get("errors"):  # confluent-kafka: a future's error, a list's errors
            return True
        return any(_has_item_error(v) for v in value.values())
    if isinstance(value, list):
        return any(_has_item_error(v) for v in value)
    return False


def _implied(op: dict) -> set[int]:
    if op["operation"] == "alter_configs":  # kafka-python picks by its `incremental` argument
        return {44} if op["arguments"].get("incremental") else {33}
    return IMPLIED[op["operation"]]


def _walk(value, path: tuple[str, ...] = ()):
    """(path, leaf) of every leaf of a JSON-like value (path: the dict keys on the way)."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _walk(item, path + (key,))
    elif isinstance(value, list):
        for item in value:
            yield from _walk(item, path)
    else:
        yield path, value


def _bodies_of(path: Path, api_key: int, kind: str) -> list[dict]:
    return [getattr(ex, kind) for ex in exchanges(path) if ex.api_key == api_key and getattr(ex, kind) is not None]


# ---- decoding -----------------------------------------------------------------------------------


def test_the_admin_captures_are_there():
    names = {p.name for p in CASES}
    for client in ("confluent", "kafka-python", "aiokafka", "kafkajs"):
        assert {f"{client}-tansu.pcap", f"{client}-mock.pcap"} <= names


@pytest.mark.parametrize("capture", CASES, ids=IDS)
def test_every_exchange_is_decoded_or_a_known_broken_answer(capture: Path):
    broker = truth(capture)[0]["broker"]
    for ex in exchanges(capture):
        where = f"{ex.api} v{ex.api_version} corr {ex.correlation_id} {ex.client}"
        assert ex.status != NO_REQUEST, where
        assert ex.request is not None and ex.request_error is None, f"{where}: {ex.request_error}"
        if ex.status != PAIRED:
            continue
        broken = broken_entry(broker, ex)
        if broken is None:
            assert ex.response is not None and ex.response_error is None, f"{where}: {ex.response_error}"
        else:
            outcome = ex.response_outcome  # a kind with the field where decoding stopped, not a text to parse
            assert ex.response is None and outcome.kind == MALFORMED, where
            field, fault, _ = BROKEN[broken]
            assert (outcome.field, outcome.fault) == (field, fault), (where, outcome)
            assert fault is not None or outcome.reason.startswith("need "), (where, outcome)


def test_every_broken_answer_occurs_and_a_client_failed_on_it():
    seen = set()
    for capture in CASES:
        header, ops = truth(capture)
        for ex in exchanges(capture):
            key = broken_entry(header["broker"], ex)
            if key is not None and ex.response_error:
                seen.add(key)
                tried = [op for op in ops if op["operation"] in OPERATIONS_OF[ex.api_key]]
                assert any(not succeeded(op) for op in tried), (capture.name, ex.api, tried)
    assert seen == set(BROKEN)


def kwire_read(schema, version: int, body: bytes):
    """kwire's decoder on `body`; past a null Kafka's schema does not allow in an array (which kio reads as null:
    it checks the nullability of strings and bytes, not of arrays), its lenient one."""
    try:
        return decoder_for(schema, version)(body, 0)
    except NullNotNullable as exc:
        if not _is_array(schema.fields, exc.field.replace("[]", "").split("."), version):
            raise
        return decoder_for(schema, version, lenient=True)(body, 0)


def _is_array(fields, path: list[str], version: int) -> bool:
    for f in fields:
        if f.name == path[0] and f.present_in(version):
            return f.is_array if len(path) == 1 else _is_array(f.fields or (), path[1:], version)
    return False


@pytest.mark.parametrize("capture", CASES, ids=IDS)
def test_kio_cannot_read_what_kwire_cannot(capture: Path):
    for api_key, version, kind, body in bodies(capture):
        try:
            kwire_read(all_schemas()[(api_key, kind)], version, body)
        except DecodeError:
            assert kio_read(api_key, version, kind, body) == (None, None), f"kio reads api {api_key} v{version}"


@pytest.mark.parametrize("capture", CASES, ids=IDS)
def test_kwire_reads_what_kio_reads(capture: Path):
    compared = 0
    for api_key, version, kind, body in bodies(capture):
        schema = all_schemas().get((api_key, kind))
        assert schema is not None, f"no schema for api {api_key} {kind}"
        if api_key == 18 and kind == "response" and body[:2] == b"\x00\x23":
            continue  # UNSUPPORTED_VERSION answers use the v0 body (tests/codec/test_differential_kio_captures.py)
        entity, kio_end = kio_read(api_key, version, kind, body)
        if entity is None:
            continue
        decoded, end = kwire_read(schema, version, body)
        assert end == kio_end, f"{schema.name} v{version}: kwire read {end} bytes, kio {kio_end}"
        compare(entity, decoded, schema.fields, version)
        compared += 1
    assert compared >= 30, f"only {compared} bodies compared"


# ---- the clients' truth on the wire ---------------------------------------------------------------


@pytest.mark.parametrize("capture", CASES, ids=IDS)
def test_the_api_keys_the_operations_imply_are_on_the_wire(capture: Path):
    on_wire = {ex.api_key for ex in exchanges(capture)}
    _, ops = truth(capture)
    done = [op for op in ops if succeeded(op)]
    assert len(done) >= 4
    for op in done:
        assert _implied(op) & on_wire, f"{op['operation']} succeeded but none of {_implied(op)} is on the wire"


def _created_topics(ops) -> list[dict]:
    out = []
    for op in ops:
        if op["operation"] == "create_topics" and succeeded(op):
            for t in op["arguments"]["topics"]:
                configs = t.get("config") or {e["name"]: e["value"] for e in t.get("configEntries", [])}
                out.append({"name": t["topic"], "partitions": t.get("num_partitions", t.get("numPartitions")),
                            "replication": t.get("replication_factor", t.get("replicationFactor")),
                            "configs": configs})
    return out


@pytest.mark.parametrize("capture", [p for p in CASES if "tansu" in p.name], ids=lambda p: p.name)
def test_created_topics_are_in_create_topics_requests(capture: Path):
    created = _created_topics(truth(capture)[1])
    assert created
    sent = {t["Name"]: t for body in _bodies_of(capture, 19, "request") for t in body["Topics"]}
    for topic in created:
        wire = sent[topic["name"]]
        assert (wire["NumPartitions"], wire["ReplicationFactor"]) == (topic["partitions"], topic["replication"])
        assert {c["Name"]: c["Value"] for c in wire["Configs"]} == topic["configs"]


def test_kafka_python_topic_ids_are_those_of_the_create_topics_answer():
    capture = ADMIN / "kafka-python-tansu.pcap"
    (op,) = [op for op in truth(capture)[1] if op["operation"] == "create_topics"]
    reported = {t["name"]: t["topic_id"] for t in op["result"]["topics"]}
    answered = {t["Name"]: t["TopicId"] for body in _bodies_of(capture, 19, "response") for t in body["Topics"]}
    assert reported and {name: _kafka_uuid(text) for name, text in reported.items()} == answered


def _kafka_uuid(text: str) -> str:
    return base64.urlsafe_b64encode(uuid.UUID(text).bytes).rstrip(b"=").decode()


def _acl_fields() -> dict:
    creations = {f.name: f for f in schema_for(30, "request").fields}["Creations"]
    return {f.name: f for f in creations.fields}


ACL_ARGUMENTS = {"restype": "ResourceType", "resource_pattern_type": "ResourcePatternType",
                 "operation": "Operation", "permission_type": "PermissionType",
                 "resource_type": "ResourceType", "pattern_type": "ResourcePatternType"}


@pytest.mark.parametrize("capture", [p for p in CASES if "tansu" in p.name and "aiokafka" not in p.name],
                         ids=lambda p: p.name)
def test_created_acl_bindings_are_in_create_acls_requests_with_their_names(capture: Path):
    (op,) = [op for op in truth(capture)[1] if op["operation"] == "create_acls"]
    fields = _acl_fields()
    sent = []
    for body in _bodies_of(capture, 30, "request"):
        for c in body["Creations"]:
            named = {k: (fields[k].enum[v] if fields[k].enum else v) for k, v in c.items()}
            sent.append(named)
    assert sent
    for acl in op["arguments"]["acls"]:
        expected = {"ResourceName": acl["name"], "Principal": acl["principal"], "Host": acl["host"]}
        expected.update({ACL_ARGUMENTS[k]: v for k, v in acl.items() if k in ACL_ARGUMENTS})
        assert any(expected.items() <= s.items() for s in sent), (expected, sent)


def test_the_cluster_id_the_clients_report_is_the_one_answered():
    compared = []
    for capture in CASES:
        _, ops = truth(capture)
        reported = {leaf for op in ops if op["operation"] == "describe_cluster" and succeeded(op)
                    for path, leaf in _walk(op["result"]) if path and path[-1] in ("cluster_id", "clusterId")}
        answered = {body["ClusterId"] for key in (3, 60) for body in _bodies_of(capture, key, "response")
                    if body.get("ClusterId")}
        if reported:
            assert reported <= answered, capture.name
            compared.append(capture.name)
    assert len(compared) >= 6, compared  # confluent-kafka's describe_cluster waits out the mock's missing controller


def test_described_configs_are_what_the_clients_reported():
    checked = []
    for capture in CASES:
        done = [op for op in truth(capture)[1] if op["operation"] == "describe_configs" and succeeded(op)]
        if not done:
            continue
        reported = {str(leaf) for op in done for _, leaf in _walk(op["result"])}
        reported |= {key for op in done for path, _ in _walk(op["result"]) for key in path}
        answered = [(c["Name"], c["Value"]) for body in _bodies_of(capture, 32, "response")
                    for r in body["Results"] for c in r["Configs"]]
        assert answered, capture.name
        for name, value in answered:
            assert name in reported and value in reported, (capture.name, name, value)
        checked.append(capture.name)
    assert len(checked) >= 4, checked  # the four clients on Tansu (the mock has no DescribeConfigs)


# ---- secrets -----------------------------------------------------------------------------------


def _inspect_json(capture: Path, *extra: str) -> str:
    result = CliRunner().invoke(cli, ["inspect", "--json", *extra, str(capture)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.stdout


def _secrets_sent(ops) -> set[str]:
    """The values of sensitive configs and the SCRAM salts (as hex) the clients asked to set."""
    out = set()
    for op in ops:
        for path, leaf in _walk(op["arguments"]):
            if path and isinstance(leaf, str) and sensitive_config(path[-1]):
                out.add(json.dumps(leaf)[1:-1])  # as JSON writes it
            if path and path[-1] == "salt":
                out.add(leaf.encode().hex())
    return out


def test_sensitive_values_are_redacted_unless_show_secrets():
    shown_in = []
    for capture in CASES:
        secrets = _secrets_sent(truth(capture)[1])
        if not secrets:
            continue
        redacted, shown = _inspect_json(capture), _inspect_json(capture, "--show-secrets")
        for secret in secrets:
            if secret in shown:
                shown_in.append((capture.name, secret))
                assert secret not in redacted, f"{capture.name}: {secret!r} shown without --show-secrets"
    # on the wire: confluent's and kafka-python's IncrementalAlterConfigs on Tansu, kafka-python's
    # IncrementalAlterConfigs to the mock (unanswered), the SCRAM salts of confluent and kafka-python on Tansu
    assert len(shown_in) >= 5, shown_in
