"""The tags of observations: what each kind of observation is, and which state it feeds.

kwire.analytics.observe and observe_groups turn an Exchange into flat tuples whose first item is a tag
(their docstrings give each tuple's fields); kwire.analytics.analysis routes each to the state named
here. Tags are short strings because millions of tuples are pickled between processes; code names them
by these constants, never by the literal, and FEEDS is the one table of where each goes. A tag missing
from FEEDS is a programming error (`feed_of` raises), never silently counted as something else.
"""

from __future__ import annotations

# The states observations feed (attributes of kwire.analytics.analysis.Analysis), and one flag.
GROUPS, TRAFFIC, DELIVERY, CHANGES, QUORUM, ACKS0 = "groups", "traffic", "delivery", "changes", "quorum", "acks0"
END_TO_END = "end_to_end"
RULES = "rules"

# ---- groups (kwire.analytics.groups; produced by kwire.analytics.observe_groups)
COORDINATOR = "gc"      # the group's coordinator answered this
MEMBER = "gm"           # a request of this member
IN_GENERATION = "gp"    # the member is in this generation
GENERATION = "gs"       # the generation exists from ts (its leader)
ASSIGNMENT = "ga"       # the member was given these partitions
JOIN = "gj"             # a JoinGroup of this generation's rebalance
SYNC = "gy"             # a SyncGroup answered for this generation
LEFT = "gl"             # the member left
REBALANCING = "gr"      # REBALANCE_IN_PROGRESS answered
OFFSET_COMMIT = "go"    # an offset committed (answered without error)
JOIN_STUCK = "js"       # a JoinGroup not answered, or answered after its rebalance timeout
JOIN_WAIT = "jw"        # a JoinGroup not answered, or answered JOIN_WAIT_MIN_NS or more after it was sent
# ---- traffic (kwire.analytics.traffic)
SOFTWARE = "sw"         # ApiVersions: the client's software name and version
THROTTLED = "th"        # ThrottleTimeMs > 0
SILENCING = "sl"        # an answer whose throttle (as the client may read it) would silence the client for long
VIOLATION = "pv"        # a body against Kafka's schema (trailing bytes, malformed)
REJOIN = "rj"           # a KIP-848 or share member (re)joins (epoch 0)
# ---- delivery (kwire.analytics.delivery)
PRODUCE_BATCH = "pb"    # a Produce batch (its idempotence key or CRC)
TXN_BATCH = "tx"        # a transactional Produce batch
TXN_ADD = "ap"          # AddPartitionsToTxn (v0-v3)
END_TXN = "et"          # EndTxn
PRODUCER = "pi"         # a producer id with its transactional id and client
STALLED_FETCH = "st"    # a read_committed Fetch stopped at the LastStableOffset below the HighWatermark
SHARE_ACQUIRED = "sa"   # ShareFetch acquisitions
SHARE_ACKED = "sk"      # acknowledgements the broker took
RESENT_RECORDS = "rs"   # record fingerprints of a batch of a producer that is not idempotent
FETCHED_BATCH = "fb"    # such a producer's batch seen in a Fetch answer
# ---- end to end (kwire.analytics.end_to_end)
E2E_WRITE = "ew"        # offsets a Produce wrote (its answer's BaseOffset, its request's record count)
E2E_READ = "er"         # offsets a Fetch or ShareFetch answer delivered to a consumer, and its fetch position
E2E_COMMIT = "ec"       # an offset a group committed (OffsetCommit, TxnOffsetCommit), at the answer that accepted it
# ---- changes and quorum (kwire.analytics.changes, quorum)
CHANGE = "ch"           # a change to the cluster
PRINCIPAL = "pr"        # the principal a connection authenticated as (SASL)
QUORUM_EVENT = "qr"     # a KRaft quorum event
# ---- protocol rules (kwire.analytics.rules_state; produced by kwire.analytics.rules_read)
RULE_BROKEN = "rb"      # a rule one exchange proves broken
ADVERTISED = "ra"       # ApiVersions: the version ranges a broker advertised on a connection
HIGH_WATERMARK = "rh"   # a Fetch answer's high watermarks
LATEST_OFFSET = "rl"    # a ListOffsets answer for the latest offset (read_uncommitted)
RULE_TOPIC = "rt"       # CreateTopics / Metadata: what an exchange says of topics (validated, created, exists)
RULE_OFFSET = "ro"      # OffsetCommit / TxnOffsetCommit / OffsetFetch: offsets committed or read, with metadata
RULE_GROUP = "rg"       # ListGroups' GroupType, a ConsumerGroupHeartbeat join, a ConsumerGroupDescribe answer
THROTTLE_WINDOW = "rw"  # an answer with ThrottleTimeMs > 0: when its request was sent and it was answered
BROKER_CLOSED = "rc"    # a request left unanswered by a connection its broker closed first (closed_by broker)
# ---- a flag of the exchange's row
NO_ANSWER_EXPECTED = "a0"  # a Produce with Acks 0

FEEDS: dict[str, str] = {
    **dict.fromkeys((COORDINATOR, MEMBER, IN_GENERATION, GENERATION, ASSIGNMENT, JOIN, SYNC, LEFT, REBALANCING,
                     OFFSET_COMMIT, JOIN_STUCK, JOIN_WAIT), GROUPS),
    **dict.fromkeys((SOFTWARE, THROTTLED, SILENCING, VIOLATION, REJOIN), TRAFFIC),
    **dict.fromkeys((PRODUCE_BATCH, TXN_BATCH, TXN_ADD, END_TXN, PRODUCER, STALLED_FETCH, SHARE_ACQUIRED, SHARE_ACKED,
                     RESENT_RECORDS, FETCHED_BATCH), DELIVERY),
    **dict.fromkeys((CHANGE, PRINCIPAL), CHANGES),
    **dict.fromkeys((E2E_WRITE, E2E_READ, E2E_COMMIT), END_TO_END),
    QUORUM_EVENT: QUORUM,
    **dict.fromkeys((RULE_BROKEN, ADVERTISED, HIGH_WATERMARK, LATEST_OFFSET, RULE_TOPIC, RULE_OFFSET,
                     RULE_GROUP, THROTTLE_WINDOW, BROKER_CLOSED), RULES),
    NO_ANSWER_EXPECTED: ACKS0,
}


def feed_of(tag: str) -> str:
    """The state an observation of `tag` feeds; ValueError for a tag no table names."""
    try:
        return FEEDS[tag]
    except KeyError:
        raise ValueError(f"kwire.analytics: an observation with an unknown tag {tag!r}") from None
