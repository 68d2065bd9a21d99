"""Outcomes: what can happen to a body and to an exchange, as kinds (data), with their text derived.

As Wireshark registers its expert infos once (name, group, severity, summary) and dissectors only
say which one happened, every outcome kwire reports is one kind registered here, in KINDS, with
whom it blames and the text a person reads. The Exchange carries kinds (`request_outcome`,
`response_outcome`: a BodyOutcome; `status` and `unanswered`: exchange kinds); every output
carries them under the names of docs/vocabulary.md; counters, filters and findings read kinds
(`blames`; whether an exchange is malformed: kwire.native.exchange_build.is_malformed), never text. Text comes
only from `describe` (and from the decoder's own words for what was wrong at a malformed field, kept as the
outcome's `reason`).

What can happen to a body (a request or response frame's body, after its header):
    decoded          decoded whole
    malformed        the decoder stopped at `field` (its path), byte `offset` of the frame body: `reason`; `fault`
                     names the fault when the decoder knows it (null_not_nullable: a null where the schema
                     says the field is not nullable), else None
    trailing_bytes   decoded, `size` bytes left after it
    null_not_nullable decoded, with a null at `field` (byte `offset`) where Kafka's schema says the field is not
                     nullable (`reason`): read as if it were (what was sent, shown), the field named. A body with
                     such a null that does not decode even so is malformed, `fault` null_not_nullable: the
                     null, where Kafka's readers stop, is its first fault (kwire.errors.NullNotNullable)
    cut_by_snaplen   the capture cut it short: the snap length cut its packets, or they were lost while its frame
                     was followed by its length (`reason` says how much was captured), or its answer was
                     not captured though a later one was
    not_kept         a bound dropped it (`reason` says which: KWIRE_MAX_PENDING_BYTES before it could be
                     decoded, KWIRE_MAX_BODY_ENTRIES when it would make more entries than kwire keeps and
                     could not be kept in part)
    kept_in_part     a body of an api that changes the cluster would make more entries than kwire keeps
                     (KWIRE_MAX_BODY_ENTRIES): read to its end, the elements of its arrays past the bound
                     left out and counted in the body (kwire.codec.partial: `_not_kept`); `size` says how many
    no_decoder       kwire has no decoder for the api and version
    undecryptable    inside TLS kwire could not decrypt (counted per connection in the `tls` notes:
                     no frame of an undecrypted stream is ever read, so no Exchange carries it yet)

What can happen to an exchange (its `status`), and why an unanswered one was given up (`unanswered`):
    paired           request and response, matched by correlation id
    no_response      the request was never answered: `unanswered` is one of
                     no_answer_expected (a Produce with Acks 0), connection_closed (FIN, RST, or
                     its ports reused; after a FIN or RST the exchange's `closed_by` says whose came
                     first, broker or client), connection_idle (swept after kwire's idle time), capture_ended (still open when the capture ended), pending_overflow (the
                     connection held more pending requests than kwire.native.kafka_pairing.MAX_PENDING)
    no_request       an orphan: a response whose request was not captured

Who a kind blames (`blames`): SENDER (the client or broker wrote something Kafka's schema does not
allow: a protocol violation), CAPTURE (the recording lost it), KWIRE (a bound or a gap in kwire's
decoders), or nobody (None).
"""

from __future__ import annotations

from typing import NamedTuple

from kwire.errors import NULL_NOT_NULLABLE, BodyTooLarge

# ---- body kinds ---------------------------------------------------------------------------------
DECODED = "decoded"
MALFORMED = "malformed"
TRAILING_BYTES = "trailing_bytes"
NULL_IN_BODY = NULL_NOT_NULLABLE  # the body kind: decoded, with a null the schema does not allow
CUT_BY_SNAPLEN = "cut_by_snaplen"
NOT_KEPT = "not_kept"
KEPT_IN_PART = "kept_in_part"
NO_DECODER = "no_decoder"
UNDECRYPTABLE = "undecryptable"

# ---- exchange kinds (Exchange.status) and why an exchange went unanswered (Exchange.unanswered) --
PAIRED = "paired"
NO_RESPONSE = "no_response"
NO_REQUEST = "no_request"

NO_ANSWER_EXPECTED = "no_answer_expected"
CONNECTION_CLOSED = "connection_closed"
CONNECTION_IDLE = "connection_idle"
CAPTURE_ENDED = "capture_ended"
PENDING_OVERFLOW = "pending_overflow"

# ---- who closed first: an exchange's `closed_by` (its `extra`, beside unanswered connection_closed) ------------
BROKER_SIDE, CLIENT_SIDE = "broker", "client"
# connection_closed as pairing hands it on with the side whose FIN or RST came first (kwire.native.kafka_pairing ->
# kwire.native.exchange_build, which makes it unanswered connection_closed and closed_by the side): never an Exchange's kind
CLOSED_BY = {f"{CONNECTION_CLOSED}/{side}": side for side in (BROKER_SIDE, CLIENT_SIDE)}
CLOSED_BY_BROKER, CLOSED_BY_CLIENT = CLOSED_BY

# ---- whom a kind blames -------------------------------------------------------------------------
SENDER = "sender"
CAPTURE = "capture"
KWIRE = "kwire"


class Kind(NamedTuple):
    name: str
    subject: str  # "body", "exchange" or "unanswered"
    blames: str | None  # SENDER, CAPTURE, KWIRE or None
    text: str  # what a person reads; BodyOutcome fields fill its {placeholders}
    keeps_body: bool = False  # a decoded body is there (the others leave it null)


KINDS: dict[str, Kind] = {k.name: k for k in (
    Kind(DECODED, "body", None, "decoded", True),
    Kind(MALFORMED, "body", SENDER, "malformed at {where}: {reason}"),
    Kind(TRAILING_BYTES, "body", SENDER, "{size} bytes left after the decoded body", True),
    Kind(NULL_IN_BODY, "body", SENDER, "decoded, with a null at {where} where the schema says not nullable", True),
    Kind(CUT_BY_SNAPLEN, "body", CAPTURE, "cut short in the capture: {reason}"),
    Kind(NOT_KEPT, "body", KWIRE, "not kept: {reason}"),
    Kind(KEPT_IN_PART, "body", KWIRE, "kept in part: {reason}; {size:,} array elements past it not kept", True),
    Kind(NO_DECODER, "body", KWIRE, "not decoded: kwire has no decoder for this api version"),
    Kind(UNDECRYPTABLE, "body", CAPTURE, "not decoded: inside TLS kwire could not decrypt"),
    Kind(PAIRED, "exchange", None, "request and response paired by correlation id"),
    Kind(NO_RESPONSE, "exchange", None, "the request was never answered"),
    Kind(NO_REQUEST, "exchange", CAPTURE, "a response whose request was not captured"),
    Kind(NO_ANSWER_EXPECTED, "unanswered", None, "no answer expected (Produce with Acks 0)"),
    Kind(CONNECTION_CLOSED, "unanswered", None, "the connection closed first"),
    Kind(CONNECTION_IDLE, "unanswered", KWIRE, "given up: the connection was idle longer than kwire waits"),
    Kind(CAPTURE_ENDED, "unanswered", CAPTURE, "the capture ended first"),
    Kind(PENDING_OVERFLOW, "unanswered", KWIRE, "given up: too many requests pending on the connection"),
)}
BODY_KINDS = tuple(name for name, k in KINDS.items() if k.subject == "body")
EXCHANGE_KINDS = tuple(name for name, k in KINDS.items() if k.subject == "exchange")
UNANSWERED_KINDS = tuple(name for name, k in KINDS.items() if k.subject == "unanswered")


class BodyOutcome(NamedTuple):
    """What happened to one body: a kind from BODY_KINDS and its details."""

    kind: str
    field: str | None = None  # malformed: the path of the field the decoder stopped at ("Topics.Name")
    offset: int | None = None  # malformed: where, in bytes from the start of the frame body
    reason: str | None = None  # malformed: what was wrong there, in the decoder's words
    size: int = 0  # trailing_bytes: how many bytes were left; kept_in_part: how many array elements were left out
    fault: str | None = None  # malformed: the fault the decoder named (kwire.errors.NULL_NOT_NULLABLE), else None


DECODED_BODY = BodyOutcome(DECODED)
NOT_KEPT_BODY = BodyOutcome(NOT_KEPT, reason="its connection held more unanswered request bytes than "
                                              "KWIRE_MAX_PENDING_BYTES")
NO_DECODER_BODY = BodyOutcome(NO_DECODER)
CUT_BODY = BodyOutcome(CUT_BY_SNAPLEN, reason="the snap length cut its packets")
# A request answered, by a broker's order, though its answer's packets were lost: kwire.native.kafka_pairing pairs a
# request still pending when a later one on its connection is answered (a broker answers in order).
ANSWER_NOT_CAPTURED = BodyOutcome(CUT_BY_SNAPLEN, reason="the answer was not captured; a later request's answer "
                                                         "was, and a broker answers a connection's requests in order")


def cut_body(captured: int, size: int) -> BodyOutcome:
    """A body of which `captured` of its frame's `size` bytes were captured: the snap length cut the rest,
    or packets were lost (TCP's gaps do not say which); kwire.native.framing followed the frame by its length."""
    return BodyOutcome(CUT_BY_SNAPLEN, reason=f"{captured} of {size} bytes captured (snap length, or packets lost)")


def is_cut(outcome: BodyOutcome | None) -> bool:
    return outcome is not None and outcome.kind == CUT_BY_SNAPLEN


_LOST = {NOT_KEPT: NOT_KEPT_BODY, CUT_BY_SNAPLEN: CUT_BODY}


def lost_body(kind: str) -> BodyOutcome:
    """The outcome of a body a layer below decoding marked with a body kind (kwire.native.kafka_pairing's
    PendingRequest.lost, RawExchange.response_lost: NOT_KEPT, CUT_BY_SNAPLEN, UNDECRYPTABLE)."""
    return _LOST.get(kind) or BodyOutcome(kind)


def kept_in_part(error, cut: int) -> BodyOutcome:
    """The outcome of a body past the entries bound (`error`, its BodyTooLarge) read in part, `cut` array
    elements left out."""
    return BodyOutcome(KEPT_IN_PART, getattr(error, "field", None), getattr(error, "offset", None),
                       getattr(error, "reason", None) or str(error), cut)


def null_in_body(error) -> BodyOutcome:
    """The outcome of a body that decoded as if its null field (`error`, the decoder's NullNotNullable) were
    nullable."""
    return BodyOutcome(NULL_IN_BODY, error.field, error.offset, error.reason, 0, NULL_NOT_NULLABLE)


def trailing(size: int) -> BodyOutcome:
    return BodyOutcome(TRAILING_BYTES, size=size) if size else DECODED_BODY


def malformed(error) -> BodyOutcome:
    """The outcome of a kwire.errors.DecodeError: malformed, or not kept when the decoder stopped at a
    bound of kwire's (BodyTooLarge: the bytes may be well formed)."""
    kind = NOT_KEPT if isinstance(error, BodyTooLarge) else MALFORMED
    return BodyOutcome(kind, getattr(error, "field", None), getattr(error, "offset", None),
                       getattr(error, "reason", None) or str(error), 0, getattr(error, "fault", None))


def describe(outcome: BodyOutcome | None) -> str | None:
    """The text of a body outcome (None for no body)."""
    if outcome is None:
        return None
    kind = KINDS[outcome.kind]
    if outcome.kind == MALFORMED or outcome.kind == NULL_IN_BODY:
        where = outcome.field or "the body"
        if outcome.offset is not None:
            where += f" (byte {outcome.offset})"
        return kind.text.format(where=where, reason=outcome.reason or "?")
    return kind.text.format(size=outcome.size, reason=outcome.reason or _DEFAULT_REASONS.get(outcome.kind, "?"))


_DEFAULT_REASONS = {NOT_KEPT: "a bound of kwire's", CUT_BY_SNAPLEN: "the snap length cut its packets"}


def error_text(outcome: BodyOutcome | None) -> str | None:
    """What JSON Lines and Parquet say in `request_error` / `response_error`: the text of an outcome
    that left a body to decode undecoded (malformed, cut, not kept, undecryptable); None otherwise
    (decoded, trailing bytes, no decoder, no body)."""
    if outcome is None or outcome.kind in _NO_ERROR:
        return None
    return describe(outcome)


_NO_ERROR = frozenset({DECODED, TRAILING_BYTES, NULL_IN_BODY, NO_DECODER})


def kind_of(outcome: BodyOutcome | None) -> str | None:
    return None if outcome is None else outcome.kind


def trailing_size(outcome: BodyOutcome | None) -> int:
    return outcome.size if outcome is not None and outcome.kind == TRAILING_BYTES else 0


def blames(kind: str | None) -> str | None:
    return None if kind is None else KINDS[kind].blames
