"""Why a captured packet did not become a TCP segment: the net layer's drop reasons, registered (kwire.reasons).

Each name is a kwire.native.net_decode.DecodeCounters field, counted once per packet by `reject` or `note`
(kwire.native.net_layers) under the constant made here; RunSummary.net keeps the counts by these names (what `kwire
spark` sums per file), `kwire live`'s dashboard shows their total, and the closing line's no-Kafka note says
those with a `text` by count (non_ip and non_tcp by what the packets were: "UDP to port 53 not opened").
"""

from __future__ import annotations

from kwire.reasons import Reason, registry

_COUNTS = "RunSummary.net and kwire spark's net counts; their total in kwire live's dashboard (`non_tcp`)"
_NOTE = "; the closing line's no-Kafka note"

DROPS_LIST = (
    Reason("non_ip", "the link layer carries something other than IPv4 or IPv6 (ARP, LLC, an unknown ethertype)",
           _COUNTS + _NOTE + " names what they were (\"ethertype 0x88cc not opened\")"),
    Reason("non_tcp", "IP carrying something other than TCP (UDP, ICMP, ESP), or a tunnel kwire does not open",
           _COUNTS + _NOTE + " names what they were (\"UDP to port 53 not opened\")"),
    Reason("fragments", "an IP fragment (kwire does not reassemble IP; IPv6 atomic fragments are read)",
           _COUNTS + _NOTE, "IP fragments (not reassembled)"),
    Reason("malformed", "header values that cannot be right (an IP version, header length or TCP data offset)",
           _COUNTS + _NOTE, "malformed"),
    Reason("short", "the captured bytes end inside the link, IP or TCP headers (the snap length, a cut packet)",
           _COUNTS + _NOTE, "too short to hold their headers"),
    Reason("unknown_linktype", "a record of a link type kwire does not read",
           _COUNTS + "; `kwire inspect` names the link type and the files (`unknown_linktypes`)"),
    Reason("too_deep", "more headers before TCP than kwire opens (tunnels nested without end: a GRE loop)",
           _COUNTS + _NOTE, "tunnels nested too deep"),
)

DROPS = registry(DROPS_LIST)
DROP_NAMES = tuple(DROPS)
NON_IP, NON_TCP, FRAGMENTS, MALFORMED, SHORT, UNKNOWN_LINKTYPE, TOO_DEEP = DROP_NAMES
