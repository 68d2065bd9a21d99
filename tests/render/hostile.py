"""Test-only: hostile captures built with the project's own writers, seeded.

`encode_body(api_key, kind, version, values)` writes a body from a dict of Kafka field names with the
fuzz Encoder's primitives (tests/fuzz/targets.py), driven by kwire's schemas: what is not given is
written as zero, empty or null. On top of it:

- `escape_capture(rng)`: a producer and a consumer group whose client ids, topics, group ids, member
  ids and record keys hold terminal escape sequences (OSC title, clear screen, C1 CSI, bidi override,
  rich markup), in Metadata, Produce, FindCoordinator, JoinGroup, Fetch and a failed Heartbeat.
- `absurd_time_pcapng(ticks, tsresol)`: one paired exchange in a pcapng whose interface resolution
  and timestamps put it anywhere (year 10000 and beyond, the epoch, ...).
- `tagged_flood(n)`: an ApiVersions v3 request whose body carries n unknown tagged fields.
- `sasl_tagged(secret)`: a SaslAuthenticate v2 exchange with the secret in unknown tagged fields.
- `produce_exchange(corr, batches)` / `bomb_capture(exchanges, partitions, value_size)`: Produce
  exchanges whose partitions carry the given record sets; zstd batches of one record whose value is
  `value_size` zero bytes (a few KB on the wire), `partitions` of them per exchange.
"""

from __future__ import annotations

import random
import struct

from kwire.codec.schema import Field
from kwire.codec.schemas import schema_for
from tests.capture.builders import epb, idb, shb
from tests.codec.test_records_encoder import ZSTD, uvarint, v2_batch
from tests.fuzz.conversation import conversation, conversation_pcap
from tests.fuzz.targets import Encoder
from tests.kafka.frames import request_frame, response_frame

# What a hostile client puts in its strings.
OSC_TITLE = "\x1b]0;pwned\x07"
CLEAR = "\x1b[2J\x1b[H"
C1_CSI = "\x9b31m"
BIDI = "\u202e"
MARKUP = "[bold red]markup[/][link=http://x]"
NASTY = (OSC_TITLE, CLEAR, C1_CSI, BIDI, "\x00\x08\x7f", MARKUP)
RAW_CONTROLS = ("\x1b", "\x07", "\x9b", "\u202e", "\x00", "\x08", "\x7f")


class _ValueEncoder(Encoder):
    """Encoder writing given values instead of random ones."""

    def __init__(self, version: int, flexible: bool):
        super().__init__(version, flexible, random.Random(0))

    def scalar(self, f: Field, elem: str, value) -> bytes:
        if elem in self.FIXED:
            code = self.FIXED[elem]
            return struct.pack(">" + code, value if value is not None else 0)
        if elem == "uuid":
            return value if value is not None else bytes(16)
        if elem == "string":
            if value is None:
                return self.length(None) if f.nullable_in(self.v) else self.length(0)
            raw = value.encode("utf-8", "surrogatepass")
            return self.length(len(raw)) + raw
        if elem in ("bytes", "records"):
            if value is None:
                return self.length(None, wide=True)
            return self.length(len(value), wide=True) + bytes(value)
        raise AssertionError(elem)

    def field_value(self, f: Field, value) -> bytes:
        if f.is_array:
            if value is None:
                return self.length(None, wide=True) if f.nullable_in(self.v) else self.length(0, wide=True)
            out = [self.length(len(value), wide=True)]
            for item in value:
                out.append(self.struct_values(f.fields or (), item) if f.is_struct
                           else self.scalar(f, f.element_type, item))
            return b"".join(out)
        if f.is_struct and f.fields is not None:
            return self.struct_values(f.fields, value or {})
        return self.scalar(f, f.type, value)

    def struct_values(self, fields, values: dict) -> bytes:
        out, tagged = [], []
        for f in fields:
            if not f.present_in(self.v):
                continue
            if self.flexible and f.tagged_in(self.v):
                if f.name in values:
                    tagged.append((f.tag, self.field_value(f, values[f.name])))
                continue
            out.append(self.field_value(f, values.get(f.name)))
        if self.flexible:
            for tag, raw in (values.get("_unknown_tagged_fields") or {}).items():
                tagged.append((tag, raw))
            tagged.sort(key=lambda t: t[0])
            out.append(uvarint(len(tagged)))
            out += [uvarint(tag) + uvarint(len(raw)) + raw for tag, raw in tagged]
        return b"".join(out)


def encode_body(api_key: int, kind: str, version: int, values: dict) -> bytes:
    schema = schema_for(api_key, kind)
    assert schema is not None and version in schema.valid, (api_key, kind, version)
    return _ValueEncoder(version, schema.is_flexible(version)).struct_values(schema.fields, values)


def exchange(api_key: int, version: int, corr: int, client_id: str, request: dict, response: dict):
    """The two frames of one exchange, request and response, as conversation() messages."""
    schema = schema_for(api_key, "request")
    flexible = schema.is_flexible(version)
    resp_flexible = flexible and api_key != 18  # ApiVersions answers with response header v0
    return [(0, request_frame(api_key, version, corr, client_id, encode_body(api_key, "request", version, request),
                              flexible=flexible)),
            (1, response_frame(corr, encode_body(api_key, "response", version, response), flexible=resp_flexible))]


def nasty(rng: random.Random, base: str) -> str:
    """`base` with every hostile string spliced in, in a random order."""
    pieces = list(NASTY)
    rng.shuffle(pieces)
    return base + "-".join(pieces)


def escape_capture(rng: random.Random) -> tuple[bytes, dict[str, str]]:
    """A pcap of a producer and a consumer whose strings carry escape sequences; also the strings."""
    names = {"client": nasty(rng, "cli"), "topic": nasty(rng, "top"), "group": nasty(rng, "grp"),
             "member": nasty(rng, "mem"), "key": nasty(rng, "key")}
    topic, group, client = names["topic"], names["group"], names["client"]
    batch = v2_batch([(names["key"].encode(), b"value"), (b"k2", b"v2")], base_ts=1_795_305_690_000)
    messages = []
    messages += exchange(3, 9, 1, client, {"Topics": [{"Name": topic}]},
                         {"Brokers": [{"NodeId": 1, "Host": nasty(rng, "host"), "Port": 9092}],
                          "ClusterId": nasty(rng, "cluster"),
                          "Topics": [{"Name": topic, "Partitions": [{"PartitionIndex": 0}, {"PartitionIndex": 1}]}]})
    messages += exchange(0, 9, 2, client, {"Acks": -1, "TimeoutMs": 30000, "TopicData": [
        {"Name": topic, "PartitionData": [{"Index": 1, "Records": batch}]}]},
        {"Responses": [{"Name": topic, "PartitionResponses": [{"Index": 1, "ErrorCode": 0, "BaseOffset": 0}]}]})
    messages += exchange(10, 3, 3, client, {"Key": group, "KeyType": 0},
                         {"ErrorCode": 0, "NodeId": 1, "Host": "127.0.0.1", "Port": 9092})
    messages += exchange(11, 7, 4, client, {"GroupId": group, "SessionTimeoutMs": 45000, "RebalanceTimeoutMs": 300000,
                                            "MemberId": names["member"], "ProtocolType": "consumer",
                                            "Protocols": [{"Name": "range", "Metadata": b""}]},
                         {"ErrorCode": 0, "GenerationId": 1, "ProtocolName": "range", "Leader": names["member"],
                          "MemberId": names["member"], "Members": []})
    messages += exchange(1, 11, 5, client, {"ReplicaId": -1, "MaxWaitMs": 500, "MinBytes": 1, "IsolationLevel": 1,
                                            "SessionEpoch": -1, "Topics": [
                                                {"Topic": topic, "Partitions": [{"Partition": 1, "FetchOffset": 0}]}]},
                         {"Responses": [{"Topic": topic, "Partitions": [
                             {"PartitionIndex": 1, "HighWatermark": 2, "LastStableOffset": 2, "Records": batch}]}]})
    messages += exchange(12, 4, 6, client, {"GroupId": group, "GenerationId": 1, "MemberId": names["member"]},
                         {"ErrorCode": 27})
    return conversation_pcap(messages, start_ns=1_795_305_690 * 10**9), names


def absurd_time_pcapng(ticks: int, tsresol: int | None) -> bytes:
    """One Metadata exchange (and the handshake) at `ticks` of an interface with `tsresol`."""
    records = conversation(exchange(3, 1, 1, "cli", {"Topics": []}, {"Brokers": [], "Topics": []}), start_ns=0)
    blocks = [shb(), idb(1, tsresol=tsresol)]
    blocks += [epb(0, (ticks + i) % (1 << 64), data) for i, (_, data) in enumerate(records)]
    return b"".join(blocks)


def tagged_flood(n: int) -> bytes:
    """A pcap: an ApiVersions v3 request with n unknown tagged fields (1 byte each), and its answer."""
    request = {"ClientSoftwareName": "flood", "ClientSoftwareVersion": "1",
               "_unknown_tagged_fields": {1000 + i: bytes([i & 0xFF]) for i in range(n)}}
    return conversation_pcap(exchange(18, 3, 1, "cli", request, {"ErrorCode": 0, "ApiKeys": []}))


def sasl_tagged(secret: bytes) -> bytes:
    """A pcap: SaslHandshake, then SaslAuthenticate v2 with `secret` in unknown tagged fields of both
    bodies (a newer client's or broker's field kwire cannot name)."""
    messages = exchange(17, 1, 1, "cli", {"Mechanism": "PLAIN"}, {"ErrorCode": 0, "Mechanisms": ["PLAIN"]})
    messages += exchange(36, 2, 2, "cli", {"AuthBytes": b"\0alice\0" + secret,
                                           "_unknown_tagged_fields": {77: secret}},
                         {"ErrorCode": 0, "AuthBytes": b"", "SessionLifetimeMs": 0,
                          "_unknown_tagged_fields": {78: secret}})
    return conversation_pcap(messages)


def produce_exchange(corr: int, batches: list[bytes], client_id: str = "producer", acks: int = -1):
    """A Produce v9 exchange, one partition of topic "t" per record set in `batches`."""
    partitions = [{"Index": i, "Records": batch} for i, batch in enumerate(batches)]
    return exchange(0, 9, corr, client_id, {"Acks": acks, "TimeoutMs": 30000, "TopicData": [
        {"Name": "t", "PartitionData": partitions}]},
        {"Responses": [{"Name": "t", "PartitionResponses": [{"Index": i, "ErrorCode": 0} for i in range(len(batches))]}]})


def bomb_capture(exchanges: int, partitions: int, value_size: int) -> bytes:
    """A pcap of `exchanges` Produce exchanges, each with `partitions` zstd batches of one record whose
    value is `value_size` zero bytes."""
    batch = v2_batch([(b"k", bytes(value_size))], codec=ZSTD)
    messages = []
    for corr in range(1, exchanges + 1):
        messages += produce_exchange(corr, [batch] * partitions)
    return conversation_pcap(messages)
