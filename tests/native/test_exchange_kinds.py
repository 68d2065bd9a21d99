"""Waits and version negotiation (kwire.native.exchange_kinds) in the figures: a long poll answered
empty is not a slow answer, a refused ApiVersions is not a failure."""

from __future__ import annotations

import re

from kwire.native.exchange_kinds import is_wait
from kwire.codec.values import RawRecords
from kwire.model import Exchange
from tests import problems as P


def _fetch(latency_ms: float, records: bytes | None, max_wait: int = 500, api: str = "Fetch", **part) -> Exchange:
    ex = Exchange(1, "c:1", "b:2", "paired", 1, api_key=1 if api == "Fetch" else 78, api=api, api_version=16,
                  request_ts_ns=0, response_ts_ns=int(latency_ms * 1e6))
    ex.request = {"MaxWaitMs": max_wait}
    ex.response = {"Responses": [{"Partitions": [{"Records": None if records is None else RawRecords(records),
                                                  **part}]}]}
    return ex


def test_what_a_wait_is():
    assert is_wait(_fetch(501, None)) and is_wait(_fetch(400, b""))
    assert not is_wait(_fetch(501, b"x" * 70))  # data came: served
    assert not is_wait(_fetch(10, None))  # answered empty at once: served (an error, a session change...)
    assert not is_wait(_fetch(501, None, max_wait=0))
    assert not is_wait(_fetch(501, None, api="ShareFetch", AcquiredRecords=[{"FirstOffset": 0}]))


def test_clean_consumers_wait_at_their_max_wait_and_are_served_fast():
    """The consumers ask with fetch.wait.max.ms 500 (their configuration, in the truth log's
    requests): their waits sit at 500 ms, their served fetches are fast, none of them is "slowest"."""
    name = "clean-classic"
    doc = P.document(name)
    fetch = doc["apis"]["Fetch"]
    assert fetch["waits"]["count"] > 10 and 490 <= fetch["waits"]["p50_ms"] <= 520
    assert fetch["latency_ms"]["p50"] < 50
    rtts = [float(m) for m in re.findall(r"Received FetchResponse \(v\d+, \d+ bytes, CorrId \d+, rtt (\d+\.\d+)ms",
                                         P.log(name))]
    assert sum(r >= 400 for r in rtts) >= fetch["waits"]["count"]  # every wait the clients saw as long
    assert not [s for s in doc["slowest"] if s["api"] == "Fetch" and s["latency_ms"] >= 400]
    assert doc["totals"]["waits"]["count"] == fetch["waits"]["count"]


def test_refused_api_versions_are_negotiation():
    name = "clean-classic"
    doc = P.document(name)
    refusals = len(re.findall(r"ApiVersionRequest v3 failed due to UNSUPPORTED_VERSION: retrying", P.log(name)))
    api = doc["apis"]["ApiVersions"]
    silent = doc["client_ids"]["kwire-mock-host"]["negotiations"]  # the mock's host logs nothing
    assert api["negotiations"] - silent == refusals and api["failed"] == 0 and api["errors"] == {}
    assert "UNSUPPORTED_VERSION" not in doc["totals"]["errors"] and api["decode_errors"] == 0
