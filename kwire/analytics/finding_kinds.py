"""Finding kinds, registered: one declaration per kind (issue 46 item 3, as Wireshark registers its
expert infos).

KINDS declares each kind kwire.analytics.findings can list: its `name`, its default `severity` (the
finder may lower or raise it where its section of docs/findings.md says so), what it `diagnoses` (one
line), its `keys` (beside the keys every finding has; a duration kept for one release under its old name in
seconds, `X_s`, comes last, after its `X_ms`: kwire.vocabulary declares each key with its unit) and whether it is
an `episode` (the live findings log tells two of one kind apart by their start too: kwire.live.findings_log).
scripts/gen_docs.py writes docs/findings.md's list of kinds from it; tests/docs/test_finding_kinds.py holds the
registry, the doc's keys and the kinds the finders emit together. The protocol's broken rules are one kind,
protocol_violation, told apart by `rule` (kwire.analytics.rules registers those). TCP close reasons, TLS "not
decrypted" reasons and net drop reasons are registered the same way in their own layers (kwire.reasons:
kwire.net.drops, kwire.tcp.closes, kwire.tls.reasons; docs/reasons.md).
"""

from __future__ import annotations

from typing import NamedTuple


class Kind(NamedTuple):
    name: str
    severity: str
    diagnoses: str
    keys: tuple[str, ...]
    episode: bool = False


KINDS_LIST = (
    Kind("transaction_stall", "warning", "a transaction left open: read_committed consumers cannot read past it",
         ("topic", "partition", "producer_id", "transactional_id", "producer_client_id", "producer_client",
          "stalled_ms", "client_ids", "high_watermark", "last_stable_offset", "stalled_s"), episode=True),
    Kind("member_expired", "warning", "a group member that stopped heartbeating and was removed",
         ("group_id", "member_id", "client_id", "partitions", "unowned_ms", "reassigned", "unowned_s")),
    Kind("join_stuck", "warning", "a JoinGroup not answered within its rebalance timeout",
         ("group_id", "member_id", "client_id", "waited_ms", "rebalance_timeout_ms", "count", "waited_s")),
    Kind("join_left_behind", "warning", "members still waiting in a JoinGroup while generations form without them",
         ("group_id", "member_id", "client_id", "client", "joins", "generations", "waited_ms", "rebalance_timeout_ms",
          "waited_s")),
    Kind("rebalance_storm", "warning", "a group rebalancing again and again as members come and go",
         ("group_id", "generations", "rebalancing_ms", "clients", "rebalancing_s")),
    Kind("slow_broker", "warning", "a broker answering far slower than the others for a while",
         ("broker", "apis", "p50_ms", "baseline_p50_ms", "requests"), episode=True),
    Kind("error_burst", "warning", "error codes in answers, and what the clients did about them",
         ("api", "error", "count", "client_ids", "reaction", "reactions")),
    Kind("produce_retry", "warning", "batches an idempotent producer sent again",
         ("topic", "partition", "producer_id", "transactional_id", "producer_client_id", "producer_client", "batches",
          "records", "attempts", "idempotent")),
    Kind("duplicate_write", "warning", "records a producer that is not idempotent wrote twice",
         ("topic", "partition", "client_id", "client", "error", "records", "offsets", "read_twice", "resent_after_ms",
          "resent_after_s")),
    Kind("share_redelivery", "warning", "share group records delivered more than once",
         ("group_id", "topic", "partition", "redelivered", "archived", "rejected", "released", "lock_expired")),
    Kind("client_hangup", "warning", "a client hanging up right after an answer it probably could not parse",
         ("client", "client_id", "broker", "client_software", "after_api", "count")),
    Kind("protocol_violation", "warning", "a rule of Kafka's protocol broken (docs/rules.md; severity is the rule's)",
         ("rule", "side", "says", "cites", "api", "api_version", "count", "software", "client_software", "brokers",
          "detail", "violation", "stopped_at")),
    Kind("throttled", "warning", "answers with ThrottleTimeMs > 0: the broker slowed the client down",
         ("client_id", "broker", "throttle_total_ms", "count", "throttle_ms_total")),
    Kind("unanswered", "warning", "requests never answered while their clients went on",
         ("api", "count", "client_ids")),
    Kind("client_silenced", "warning", "a client gone quiet after an answer whose throttle would silence it",
         ("client_id", "client", "broker", "api", "api_version", "correlation_id", "throttle_ms", "read_as", "quiet_ms",
          "client_software", "quiet_s")),
    Kind("admin_change", "warning", "a change to the cluster: who changed what",
         ("change", "client_id", "principal", "clients", "operations", "resources", "resource_count", "count",
          "refused", "unanswered", "not_read")),
    Kind("quorum_leader_change", "warning", "the KRaft quorum's leader changed",
         ("leader_id", "epoch", "previous_leader_id", "previous_epoch", "count")),
    Kind("broker_fenced", "warning", "a broker fenced by the controller",
         ("broker_id", "fenced_ms", "requested", "count", "fenced_s")),
    Kind("metadata_behind", "warning", "a broker's metadata behind the controller's",
         ("broker_id", "max_offsets", "behind_ms", "behind_s")),
)

KINDS: dict[str, Kind] = {k.name: k for k in KINDS_LIST}
EPISODES = frozenset(k.name for k in KINDS_LIST if k.episode)


def kinds_list() -> str:
    """docs/findings.md's list of kinds (scripts/gen_docs.py), one line each."""
    lines = []
    for k in KINDS_LIST:
        anchor = "findings-duplicate-write.md" if k.name == "duplicate_write" else f"#{k.name}"
        lines.append(f"- [`{k.name}`]({anchor}) ({k.severity}): {k.diagnoses}")
    return "\n".join(lines)
