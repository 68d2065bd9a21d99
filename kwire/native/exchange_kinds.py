"""Two kinds of exchange that look like trouble in raw figures and are not: waits and negotiation.

- A wait: a Fetch or ShareFetch answered empty (no record bytes, nothing acquired) after at least
  WAIT_FRACTION of its MaxWaitMs. The broker held the request for data that did not come: a long
  poll, not a slow answer. Stats keep its latency apart from the served requests' (`waits`).
- Negotiation: an ApiVersions answered UNSUPPORTED_VERSION and nothing else. The broker names the
  versions it speaks and the client asks again, lower, on the same connection (a client that
  cannot, hangs up: kwire.analytics.findings_traffic's client_hangup). Stats count it under
  `negotiations`, not as an error or a failure.
"""

from __future__ import annotations

from kwire.codec.version_refusal import is_version_refusal
from kwire.model import PAIRED, Exchange

WAIT_FRACTION = 0.8
WAIT_APIS = frozenset({"Fetch", "ShareFetch"})


def is_wait(ex: Exchange) -> bool:
    if ex.api not in WAIT_APIS or ex.status != PAIRED or not ex.request or not ex.response:
        return False
    max_wait = ex.request.get("MaxWaitMs")
    if not isinstance(max_wait, int) or max_wait <= 0:
        return False
    if (ex.response_ts_ns - ex.request_ts_ns) < WAIT_FRACTION * max_wait * 1_000_000:
        return False
    for topic in ex.response.get("Responses") or ():
        for part in topic.get("Partitions") or ():
            records = part.get("Records")
            if records is not None and len(records) or part.get("AcquiredRecords"):
                return False
    return True


def is_negotiation(ex: Exchange, codes: list[int]) -> bool:
    return is_version_refusal(ex.api_key, codes)
