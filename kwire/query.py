"""Which exchanges a user asked to see: the filters of `inspect` (and of `stats`).

A filter is a predicate over a decoded Exchange. Topic matching looks at the fields the schemas mark as
holding a topic name or a topic id (kwire.codec.marks), and at the names kwire.native.exchange_enrich gave topic ids.
"Errors" means: a non-zero ErrorCode anywhere in the response, a decode error, or an exchange that is
not paired; an ApiVersions answered UNSUPPORTED_VERSION is version negotiation, not an error
(kwire.codec.version_refusal). The error codes of a body are kwire.native.exchange_errors' (`error_codes`,
`response_error_codes`: the facts every exchange carries).

The selection filters sit beside them as small predicates: `--host` (`parse_host`, an address, a
network or an address with its port, matched against the client and the broker), `--since` /
`--until` (capture times in nanoseconds, resolved by the CLI) and `--partition`
(`topic_partitions`: the partition numbers under each topic struct). Kafka's schemas mark no entity
for partition numbers, so a partition is the int32 `PartitionIndex`, `Partition` or `Index` of a
struct in an array under a topic struct, or an element of its `[]int32` `Partitions` or
`PartitionIndexes` (every api kwire decodes names them so).
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from typing import NamedTuple

from kwire.codec.marks import TOPICS, message_tree, walk
from kwire.codec.version_refusal import is_version_refusal
from kwire.native.exchange_enrich import ZERO_UUID, topic_label
from kwire.kafka.apis import API_BY_NAME
from kwire.model import NO_RESPONSE, PAIRED, Exchange
from kwire.native.exchange_build import is_malformed
from kwire.native.exchange_errors import response_error_codes


def parse_api(text: str) -> int:
    """An api given by name (any case, "Fetch", "fetch") or by key number."""
    if text.isdigit():
        return int(text)
    spec = API_BY_NAME.get(text.lower())
    if spec is None:
        raise ValueError(f"unknown api {text!r}")
    return spec.key


def topics_of(ex: Exchange) -> set[str]:
    """Every topic name and id the exchange's bodies hold, and the names kwire.native.exchange_enrich gave the ids."""
    names: set[str] = set()
    for kind, body in (("request", ex.request), ("response", ex.response)):
        if not body:
            continue
        for struct, key, _ in walk(body, message_tree(ex.api_key, kind, ex.api_version, TOPICS)):
            value = struct[key]
            for item in value if type(value) is list else (value,):
                if type(item) is str and item != ZERO_UUID:
                    names.add(item)
            enriched = struct.get("TopicName")
            if type(enriched) is str:
                names.add(enriched)
    return names


def has_error(ex: Exchange) -> bool:
    if ex.status != PAIRED or is_malformed(ex):
        return True
    codes = response_error_codes(ex)
    return bool(codes) and not is_version_refusal(ex.api_key, codes)  # version negotiation is no failure


# ---- selection: partitions, hosts, times ----------------------------------------------------------

PARTITION_FIELDS = ("PartitionIndex", "Partition", "Index")  # the partition number of a partition struct
PARTITION_LISTS = frozenset({"Partitions", "PartitionIndexes"})  # []int32 partition numbers beside a topic


class TopicPartitions(NamedTuple):
    label: str  # as kwire.native.exchange_enrich.topic_label names the topic struct
    names: frozenset[str]  # every name and id the struct gives the topic (what --topic matches)
    partitions: tuple[int, ...]  # in body order, repeats removed


def _partition_numbers(struct: dict) -> list[int]:
    found: list[int] = []
    for key, value in struct.items():
        if type(value) is not list:
            continue
        for item in value:
            if type(item) is dict:
                for name in PARTITION_FIELDS:
                    n = item.get(name)
                    if type(n) is int:
                        found.append(n)
                        break
            elif type(item) is int and key in PARTITION_LISTS:
                found.append(item)
    return found


def topic_partitions(ex: Exchange) -> list[TopicPartitions]:
    """Each topic the bodies name (request first), with the partitions under its struct; a topic named
    twice (request and response, by name and by id, or in two structs) appears once, partitions merged."""
    entries: list[tuple[str, set[str], dict[int, None]]] = []
    index: dict[str, int] = {}  # every name and id -> its entry

    def entry_for(label: str, names: list[str]):
        at = next((index[n] for n in names if n in index), None)
        if at is None:
            at = len(entries)
            entries.append((label, set(), {}))
        for n in names:
            index.setdefault(n, at)
        entries[at][1].update(names)
        return entries[at]

    for kind, body in (("request", ex.request), ("response", ex.response)):
        if not body:
            continue
        structs: dict[int, tuple[dict, list[str]]] = {}
        for struct, key, _ in walk(body, message_tree(ex.api_key, kind, ex.api_version, TOPICS)):
            value = struct[key]
            if type(value) is list:  # a []string of topic names: no partitions under them
                for item in value:
                    if type(item) is str and item != ZERO_UUID:
                        entry_for(item, [item])
            elif type(value) is str and value != ZERO_UUID:
                structs.setdefault(id(struct), (struct, []))[1].append(value)
        for struct, names in structs.values():
            enriched = struct.get("TopicName")
            if type(enriched) is str:
                names.append(enriched)
            label = topic_label(struct)
            entry_for(names[0] if label == "?" else label, names)[2].update(dict.fromkeys(_partition_numbers(struct)))
    return [TopicPartitions(label, frozenset(names), tuple(parts)) for label, names, parts in entries]


def touches_partition(ex: Exchange, partitions: frozenset[int], topics: frozenset[str] = frozenset()) -> bool:
    """Whether the exchange names one of `partitions` (of one of `topics`, when given)."""
    for entry in topic_partitions(ex):
        if topics and not entry.names & topics:
            continue
        if not partitions.isdisjoint(entry.partitions):
            return True
    return False


class HostSpec(NamedTuple):
    """What `--host` names: a network (one address is a /32 or /128) and maybe a port."""

    network: ipaddress.IPv4Network | ipaddress.IPv6Network
    port: int | None


def parse_host(text: str) -> HostSpec:
    """"10.0.0.5", "10.0.0.5:9092", "::1", "[::1]:9092", "10.0.0.0/8"; ValueError otherwise."""
    text = text.strip()
    port = None
    host = text
    if text.startswith("["):
        end = text.find("]")
        if end < 0 or (end + 1 < len(text) and text[end + 1] != ":"):
            raise ValueError(f"bad address {text!r}")
        host, rest = text[1:end], text[end + 2:]
        port = _port(rest, text) if end + 1 < len(text) else None
    elif text.count(":") == 1:
        host, rest = text.split(":")
        port = _port(rest, text)
    try:
        network = ipaddress.ip_network(host, strict=False)
    except ValueError:
        raise ValueError(f"not an IP address or network: {text!r}") from None
    return HostSpec(network, port)


def _port(text: str, whole: str) -> int:
    if not text.isdigit() or not 0 < int(text) < 65536:
        raise ValueError(f"bad port in {whole!r}")
    return int(text)


def _endpoint(endpoint: str):
    """"ip:port" / "[v6]:port" -> (ip_address, port), or None for anything else."""
    host, _, port = endpoint.rpartition(":")
    if host.startswith("["):
        host = host[1:-1]
    try:
        return ipaddress.ip_address(host), int(port)
    except ValueError:
        return None


def host_matches(ex: Exchange, hosts: tuple[HostSpec, ...]) -> bool:
    """Whether the client or the broker is one of `hosts`."""
    for endpoint in (ex.client, ex.broker):
        parsed = _endpoint(endpoint)
        if parsed is None:
            continue
        address, port = parsed
        for spec in hosts:
            if address in spec.network and (spec.port is None or spec.port == port):
                return True
    return False


@dataclass(frozen=True)
class ExchangeFilter:
    api_keys: frozenset[int] = frozenset()
    client_ids: frozenset[str] = frozenset()
    topics: frozenset[str] = frozenset()
    errors_only: bool = False
    min_latency_ms: float | None = None
    hosts: tuple[HostSpec, ...] = ()
    partitions: frozenset[int] = frozenset()
    since_ns: int | None = None  # exchange time at or after
    until_ns: int | None = None  # exchange time before

    @property
    def active(self) -> bool:
        """Whether the filter turns anything down."""
        return self != ExchangeFilter()

    def __call__(self, ex: Exchange) -> bool:
        if self.api_keys and ex.api_key not in self.api_keys:
            return False
        if self.client_ids and ex.client_id not in self.client_ids:
            return False
        if self.since_ns is not None and ex.ts_ns < self.since_ns:
            return False
        if self.until_ns is not None and ex.ts_ns >= self.until_ns:
            return False
        if self.hosts and not host_matches(ex, self.hosts):
            return False
        if self.min_latency_ms is not None:
            # an unanswered request counts with how long it went unanswered (the slowest of all)
            latency = ex.latency_ms if ex.status != NO_RESPONSE else ex.unanswered_ms
            if latency is None or latency < self.min_latency_ms:
                return False
        if self.topics and not topics_of(ex) & self.topics:
            return False
        if self.partitions and not touches_partition(ex, self.partitions, self.topics):
            return False
        if self.errors_only and not has_error(ex):
            return False
        return True
