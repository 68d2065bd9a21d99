"""The consumer protocol embedded in classic group apis: subscriptions and assignments as data.

Classic consumer groups (protocol type "consumer") carry two messages of their own inside `bytes`
fields of the group apis, each an int16 version followed by the message (never flexible):
- ConsumerProtocolSubscription (v0-v3): JoinGroup request Protocols[].Metadata, JoinGroup response
  Members[].Metadata, DescribeGroups response Groups[].Members[].MemberMetadata;
- ConsumerProtocolAssignment (v0-v3): SyncGroup request Assignments[].Assignment, SyncGroup response
  Assignment, DescribeGroups response Groups[].Members[].MemberAssignment.

`decode_embedded(exchange)` is the one entry point (kwire.native.exchange_build calls it after the bodies are
decoded): it adds the decoded message right after the raw bytes it came from, under the message's
name ("ConsumerProtocolSubscription" / "ConsumerProtocolAssignment"), as a dict starting with
"Version". The raw bytes stay. Rules:
- only protocol type "consumer" is decoded; other protocol types ("connect", ...) stay bytes. Where
  the exchange does not say the protocol type (SyncGroup before v5), the bytes are decoded when they
  read as a consumer-protocol message exactly, end to end, and left alone otherwise;
- a version newer than v3 is read as v3 (Kafka's rule for these messages: new versions only append
  fields); bytes left after a known version are counted in "_trailing_bytes";
- empty bytes (a member given nothing by a leader that sent no assignment for it) add nothing;
- bytes of protocol type "consumer" that do not decode add {"Version": v or None, "error": text}.
"""

from __future__ import annotations

from kwire.codec.compiler import decoder_for
from kwire.kafka.primitives import INT16
from kwire.codec.schema import F, MessageSchema, Versions
from kwire.errors import DecodeError

CONSUMER = "consumer"
SUBSCRIPTION_KEY = "ConsumerProtocolSubscription"
ASSIGNMENT_KEY = "ConsumerProtocolAssignment"
JOIN_GROUP, SYNC_GROUP, DESCRIBE_GROUPS = 11, 14, 15
EMBEDDED_API_KEYS = frozenset({JOIN_GROUP, SYNC_GROUP, DESCRIBE_GROUPS})

_TOPIC_PARTITION = [
    F("Topic", "string", "0+"),
    F("Partitions", "[]int32", "0+"),
]

# Kafka's "type": "data" messages have no api key; -1 marks that here.
SUBSCRIPTION = MessageSchema(-1, "data", "ConsumerProtocolSubscription", Versions(0, 3), Versions(1, 0), (
    F("Topics", "[]string", "0+"),
    F("UserData", "bytes", "0+", nullable="0+"),
    F("OwnedPartitions", "[]TopicPartition", "1+", fields=_TOPIC_PARTITION),
    F("GenerationId", "int32", "2+"),
    F("RackId", "string", "3+", nullable="3+"),
))

ASSIGNMENT = MessageSchema(-1, "data", "ConsumerProtocolAssignment", Versions(0, 3), Versions(1, 0), (
    F("AssignedPartitions", "[]TopicPartition", "0+", fields=_TOPIC_PARTITION),
    F("UserData", "bytes", "0+", nullable="0+"),
))

NEWEST = 3


def decode_message(schema: MessageSchema, data: bytes, *, exact: bool = False) -> dict:
    """One embedded message: {"Version": v, fields...}. Raises DecodeError. With `exact`, bytes left
    after a version kwire knows are an error too (used where the protocol type is a guess)."""
    if len(data) < 2:
        raise DecodeError(f"{schema.name}: need 2 bytes for the version, {len(data)} left", 0)
    version = INT16.unpack_from(data, 0)[0]
    if version < 0:
        raise DecodeError(f"{schema.name}: negative version {version}", 0)
    body, end = decoder_for(schema, min(version, NEWEST))(data, 2)
    out = {"Version": version}
    out.update(body)
    left = len(data) - end
    if left and version <= NEWEST:
        if exact:
            raise DecodeError(f"{schema.name} v{version}: {left} bytes left after the message", end)
        out["_trailing_bytes"] = left
    return out


def decode_subscription(data: bytes, *, exact: bool = False) -> dict:
    return decode_message(SUBSCRIPTION, data, exact=exact)


def decode_assignment(data: bytes, *, exact: bool = False) -> dict:
    return decode_message(ASSIGNMENT, data, exact=exact)


def _decoded(schema: MessageSchema, data, protocol_type) -> dict | None:
    """What to add beside `data`, or None to add nothing."""
    if not isinstance(data, (bytes, bytearray)) or not data:
        return None
    if protocol_type is None:  # not stated: decode only what reads exactly as this protocol
        try:
            return decode_message(schema, data, exact=True)
        except DecodeError:
            return None
    if protocol_type != CONSUMER:
        return None
    try:
        return decode_message(schema, data)
    except DecodeError as exc:
        version = INT16.unpack_from(data, 0)[0] if len(data) >= 2 else None
        return {"Version": version, "error": str(exc)}


def _insert_after(node: dict, field: str, key: str, value: dict) -> None:
    """node[key] = value, placed right after node[field] (the order of keys is what views show)."""
    items = list(node.items())
    node.clear()
    for name, item in items:
        node[name] = item
        if name == field:
            node[key] = value


def _add(node, field: str, key: str, schema: MessageSchema, protocol_type) -> None:
    if not isinstance(node, dict) or key in node:
        return
    value = _decoded(schema, node.get(field), protocol_type)
    if value is not None:
        _insert_after(node, field, key, value)


def decode_embedded(ex) -> None:
    """Add the decoded consumer-protocol messages of a JoinGroup, SyncGroup or DescribeGroups
    exchange beside their raw bytes (in place); any other exchange is left alone."""
    key = ex.api_key
    if key not in EMBEDDED_API_KEYS:
        return
    request, response = ex.request, ex.response
    if key == JOIN_GROUP:
        stated = request.get("ProtocolType") if request else None
        if request:
            for protocol in request.get("Protocols") or ():
                _add(protocol, "Metadata", SUBSCRIPTION_KEY, SUBSCRIPTION, stated)
        if response:
            kind = response.get("ProtocolType") or stated
            for member in response.get("Members") or ():
                _add(member, "Metadata", SUBSCRIPTION_KEY, SUBSCRIPTION, kind)
    elif key == SYNC_GROUP:
        stated = request.get("ProtocolType") if request else None
        if request:
            for assignment in request.get("Assignments") or ():
                _add(assignment, "Assignment", ASSIGNMENT_KEY, ASSIGNMENT, stated)
        if response:
            _add(response, "Assignment", ASSIGNMENT_KEY, ASSIGNMENT, response.get("ProtocolType") or stated)
    elif response:
        for group in response.get("Groups") or ():
            kind = group.get("ProtocolType")
            if not kind:  # an empty group (no members) states no protocol type
                continue
            for member in group.get("Members") or ():
                _add(member, "MemberMetadata", SUBSCRIPTION_KEY, SUBSCRIPTION, kind)
                _add(member, "MemberAssignment", ASSIGNMENT_KEY, ASSIGNMENT, kind)


def assignment_partitions(decoded: dict | None) -> dict[str, list[int]]:
    """{topic: sorted partitions} of a decoded ConsumerProtocolAssignment (empty when None/failed)."""
    sets: dict[str, set] = {}
    if not decoded:
        return {}
    for item in decoded.get("AssignedPartitions") or ():  # a topic named many times: one set, sorted once
        topic = item.get("Topic")
        if isinstance(topic, str):
            sets.setdefault(topic, set()).update(item.get("Partitions") or ())
    return {topic: sorted(parts) for topic, parts in sets.items()}
