"""Why a TCP connection ended: the tcp layer's close reasons, registered (kwire.reasons).

The FlowTable (kwire.native.tcp_flows) closes each connection once under one of these names: its stream consumer's
`close(ts_ns, reason)` gets it (kwire.tcp.stream, the contract), the table counts it as `closed_<name>`
(RunSummary.tcp; kwire spark's tcp counts), and the Kafka layer names the requests still pending at it
unanswered by kind (kwire.native.kafka_pairing.CLOSE_REASONS: connection_closed, connection_idle, capture_ended). Which
direction sent the first FIN or RST is the connection's `closer` (kwire.tcp.stream.Connection): after "fin" or
"rst", the exchange's `closed_by` (broker or client).
"""

from __future__ import annotations

from kwire.reasons import Reason, registry

_SEEN = "StreamConsumer.close; the TCP counter `closed_{}`; the `unanswered` kind of requests pending at it: {}"

CLOSES_LIST = (
    Reason("fin", "both ends sent a FIN, and the bytes before them came (or did not within a grace of segments: gaps)",
           _SEEN.format("fin", "`connection_closed`")),
    Reason("rst", "a RST ended it", _SEEN.format("rst", "`connection_closed`")),
    Reason("idle", "no segment for the idle timeout, or evicted to make room in a full table",
           _SEEN.format("idle", "`connection_idle`")),
    Reason("end", "still open when the capture ended", _SEEN.format("end", "`capture_ended`")),
    Reason("reused", "a SYN with a new initial sequence number on its 4-tuple (a new connection in its place)",
           _SEEN.format("reused", "`connection_closed`")),
)

CLOSES = registry(CLOSES_LIST)
CLOSE_NAMES = tuple(CLOSES)
FIN_CLOSE, RST_CLOSE, IDLE_CLOSE, END_CLOSE, REUSED_CLOSE = CLOSE_NAMES
CLOSED_COUNTERS = tuple(f"closed_{name}" for name in CLOSE_NAMES)
