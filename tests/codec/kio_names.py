"""How kio 0.6.5 names the fields kwire's schemas name otherwise.

kio is generated from Kafka 4.3's message definitions; kwire's from a later trunk. Kafka renamed these
fields since (same type, same place, same versions): the differential tests compare them under kio's
older name. A new entry needs the Kafka change that made it.
"""

RENAMED_SINCE_KIO = {
    # KIP-1070 era: TxnOffsetCommit v3+ carries a consumer-group member epoch too (apache/kafka 4.4)
    "GenerationIdOrMemberEpoch": "generation_id",
    # StreamsGroupHeartbeat v1 made AcceptableRecoveryLag an int64; v0's int32 is kept under a new name
    "AcceptableRecoveryLagLegacy": "acceptable_recovery_lag",
}


def kio_field(kafka_name: str, snake_name: str, kio_names) -> str:
    """A field as kio's dataclass spells it: its snake_case name, with "_" appended where that shadows a
    Python builtin (Id -> id_), or its name before a rename kio does not know yet (OffsetCommit kept
    GenerationIdOrMemberEpoch's name in kio; TxnOffsetCommit did not)."""
    for name in (snake_name, RENAMED_SINCE_KIO.get(kafka_name)):
        if name is not None and name in kio_names:
            return name
        if name is not None and name + "_" in kio_names:
            return name + "_"
    return snake_name
