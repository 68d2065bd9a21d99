"""Test-only: changes that hid themselves past a cap, and tables that outgrew theirs (issue 49).

Each generator writes a pcap with kwire's own writer (tests/campaign/traffic.py), bodies encoded from
kwire's schemas (tests/render/hostile.py); seeded where a choice is made, `scale` growing the input
(the defaults are what the tests run; scripts and docs/bounds.md build bigger ones, each under 20 MB):

- `padded_acls(path, entries, at)`: one CreateAcls of `entries` bindings, all harmless (ALLOW User:bob
  READ on a topic of its own) but one, ALLOW User:* ALL on TOPIC:* at `at` ("first", "middle", "last"),
  answered ok each; then a DeleteTopics of `entries` topics, "orders" at `at`, answered ok each. Past
  KWIRE_MAX_BODY_ENTRIES (250,000; a test lowers it) both requests were `not_kept`: no change, no finding.
- `huge_acls(path, scale)`: one CreateAcls of 3,000 * scale harmless bindings (scale 20: the issue's
  60,000, 1.7 MB), answered ok: `kwire stats` printed a line per binding.
- `full_log(path, changes, bindings)`: `changes` CreateAcls (1,000: the change log's cap) of `bindings`
  allow-all bindings each (300: 8.6 MB), answered ok: the kept change log at its largest.
- `leader_changes(path, n)`: a controller's BeginQuorumEpoch requests naming a new (leader, epoch) `n`
  times (the issue's 9,999: 1.6 MB), each answered: 20 `quorum_leader_change` findings and 30 rows, neither
  saying what was left out.
- `many_brokers(path, scale)`: 1,000 * scale connections, each to a broker of its own (10.200.x.y:9092),
  one ApiVersions exchange each, gzipped (scale 100: the issue's 100,000 brokers, 5.4 MB): a latency
  history per broker, 741 MB.
"""

from __future__ import annotations

import gzip
import os
import random
from pathlib import Path

from kwire.capture.pcapwrite import PcapWriter
from tests.campaign.traffic import ETHERNET, Traffic, client_address
from tests.render.hostile import exchange

HARMLESS = {"ResourceType": 2, "ResourcePatternType": 3, "Principal": "User:bob", "Host": "*", "Operation": 3,
            "PermissionType": 3}  # ALLOW User:bob READ on TOPIC:<name> (LITERAL)
ALLOW_ALL = {"ResourceType": 2, "ResourceName": "*", "ResourcePatternType": 3, "Principal": "User:*", "Host": "*",
             "Operation": 2, "PermissionType": 3}  # ALLOW User:* ALL on TOPIC:*
DANGEROUS_TOPIC = "orders"
META = "__cluster_metadata"


def position(entries: int, at: str) -> int:
    return {"first": 0, "middle": entries // 2, "last": entries - 1}[at]


def _write(path, conversations) -> None:
    """Each conversation (a list of exchange frames) on a connection of its own."""
    with PcapWriter(str(path), ETHERNET) as writer:
        traffic = Traffic(writer)
        for i, frames in enumerate(conversations):
            conn = traffic.connection(client_address(i))
            conn.exchange(frames)
            conn.close()


def _name(i: int) -> str:
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = ""
    while True:
        i, d = divmod(i, 36)
        out = digits[d] + out
        if not i:
            return out


def padded_acls(path, entries: int = 1_000, at: str = "last", seed: int = 49) -> None:
    rng = random.Random(seed)
    danger = position(entries, at)
    offset = rng.randrange(1 << 20)  # the names: distinct, short (260,000 bindings and topics: 17 MB)
    creations = [dict(HARMLESS, ResourceName=_name(offset + i)) for i in range(entries)]
    creations[danger] = ALLOW_ALL
    names = [_name(offset + i) for i in range(entries)]
    names[danger] = DANGEROUS_TOPIC
    frames = exchange(30, 3, 1, "ops-tool", {"Creations": creations}, {"Results": [{"ErrorCode": 0}] * entries})
    frames += exchange(20, 6, 2, "ops-tool", {"Topics": [{"Name": n} for n in names], "TimeoutMs": 30000},
                       {"Responses": [{"Name": n, "ErrorCode": 0} for n in names]})
    _write(path, [frames])


def huge_acls(path, scale: int = 1) -> None:
    n = 3_000 * scale
    creations = [dict(HARMLESS, ResourceName=f"t-{i}") for i in range(n)]
    _write(path, [exchange(30, 3, 1, "ops-tool", {"Creations": creations}, {"Results": [{"ErrorCode": 0}] * n})])


def full_log(path, changes: int = 1_000, bindings: int = 300) -> None:
    frames = []
    for i in range(changes):
        creations = [dict(ALLOW_ALL, ResourceName=f"r{i}-{j}") for j in range(bindings)]
        frames += exchange(30, 3, i + 1, "ops-tool", {"Creations": creations},
                           {"Results": [{"ErrorCode": 0}] * bindings})
    _write(path, [frames])


def leader_changes(path, n: int = 100) -> None:
    """Controller 1..3 in turn announcing itself leader of a new epoch, n + 1 times (n changes)."""
    frames = []
    for epoch in range(1, n + 2):
        leader = 1 + epoch % 3
        request = {"ClusterId": "c", "VoterId": 4, "Topics": [{"TopicName": META, "Partitions": [
            {"PartitionIndex": 0, "VoterDirectoryId": bytes(16), "LeaderId": leader, "LeaderEpoch": epoch}]}],
            "LeaderEndpoints": [{"Name": "CONTROLLER", "Host": f"c{leader}", "Port": 9093}]}
        response = {"ErrorCode": 0, "Topics": [{"TopicName": META, "Partitions": [
            {"PartitionIndex": 0, "ErrorCode": 0, "LeaderId": leader, "LeaderEpoch": epoch}]}]}
        frames += exchange(53, 1, epoch, f"raft-client-{leader}", request, response)
    _write(path, [frames])


def many_brokers(path, scale: int = 1) -> None:
    """`path` is written gzipped (name it .gz)."""
    plain = Path(str(path) + ".tmp")
    with PcapWriter(str(plain), ETHERNET) as writer:
        traffic = Traffic(writer)
        for i in range(1_000 * scale):
            broker = (bytes([10, 200 + (i >> 16) % 50, (i >> 8) & 0xFF, i & 0xFF]), 9092)
            conn = traffic.connection(client_address(i), broker)
            conn.exchange(exchange(18, 3, 1, "probe", {"ClientSoftwareName": "probe", "ClientSoftwareVersion": "1"},
                                   {"ErrorCode": 0, "ApiKeys": []}))
    with open(plain, "rb") as src, gzip.open(str(path), "wb", compresslevel=6) as out:
        while chunk := src.read(1 << 20):
            out.write(chunk)
    os.unlink(plain)


def unreadable(path) -> None:
    """A DeleteTopics v6 request kwire cannot decode (its Topics claims 1,000 topics in a few bytes), answered
    ok for "orders", then a CreateAcls v3 cut short after its first binding, answered ok: malformed, they were
    no change at all."""
    from tests.kafka.frames import request_frame, response_frame
    from tests.render.hostile import encode_body

    topics = encode_body(20, "request", 6, {"Topics": [{"Name": DANGEROUS_TOPIC}], "TimeoutMs": 30000})
    bad = b"\xe9\x07" + topics[1:]  # the compact array length 1,000 (a varint of 1,001), one topic's bytes after
    frames = [(0, request_frame(20, 6, 1, "ops-tool", bad, flexible=True)),
              (1, response_frame(1, encode_body(20, "response", 6, {"Responses": [
                  {"Name": DANGEROUS_TOPIC, "ErrorCode": 0}]}), flexible=True))]
    acls = encode_body(30, "request", 3, {"Creations": [ALLOW_ALL, ALLOW_ALL]})
    frames += [(0, request_frame(30, 3, 2, "ops-tool", acls[:-9], flexible=True)),
               (1, response_frame(2, encode_body(30, "response", 3, {"Results": [{"ErrorCode": 0}] * 2}),
                                  flexible=True))]
    _write(path, [frames])
