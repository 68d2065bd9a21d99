"""`kwire live --metrics` behind crowds (issue 49): while hundreds of idle, slow (a byte every two seconds) and
flooding (garbage, 1 MiB headers) connections are held open and reopened as the service closes them
(tests/hostile3/scrapes.py), scrapes one after another and 200 at once each get a whole answer, none is left
waiting; the service holds no more connections than its bound, says how it ended the others
(kwire_exporter_connections_total) and writes no traceback. Outcomes are counted: the socket timeouts are hang
guards, not timings. On main before issue 49 (prometheus_client's server), 146 of the 200 at once had no answer
after 20 s."""

from __future__ import annotations

import collections

import pytest
from prometheus_client.parser import text_string_to_metric_families

from kwire.live.http_server import MAX_CONNECTIONS
from tests.hostile3.scrapes import Crowd, scrape, scrapes_at_once
from tests.metrics.prometheus import ROOT, Kwire, free_port

CAPTURE = ROOT / "captures" / "produce-consume-zstd.pcap"
GUARD_S = 30.0


@pytest.fixture(scope="module")
def service():
    port = free_port()
    kwire = Kwire(["live", "--replay", str(CAPTURE), "--speed", "0", "--metrics", f"127.0.0.1:{port}", "--no-screen"])
    try:
        kwire.wait_line("serving the final figures")
        yield port, kwire
    finally:
        assert kwire.stop() == 0, kwire.lines[-5:]


def _samples(body: bytes) -> dict:
    return {(s.name, tuple(s.labels.values())): s.value
            for family in text_string_to_metric_families(body.decode()) for s in family.samples}


def test_scrapes_behind_idle_slow_and_flooding_crowds_are_answered(service):
    port, kwire = service
    with Crowd("127.0.0.1", port, idle=300, slow=300, flood=20, seed=49) as crowd:
        assert crowd.wait_full(GUARD_S), crowd.counts
        one_by_one = [scrape("127.0.0.1", port, GUARD_S) for _ in range(10)]
        at_once = scrapes_at_once("127.0.0.1", port, 200, GUARD_S)
        last = scrape("127.0.0.1", port, GUARD_S)
        counts = dict(crowd.counts)
    assert [(s.status, s.complete) for s in one_by_one] == [(200, True)] * 10, [s.error for s in one_by_one]
    outcomes = collections.Counter((s.status, s.complete) for s in at_once)
    assert outcomes[(200, True)] + outcomes[(503, True)] == 200, outcomes  # every one answered whole
    assert outcomes[(200, True)] > 0
    assert counts["flood sent"] > 0 and counts["slow opened"] >= 300 and counts["idle opened"] >= 300
    assert last.status == 200 and last.complete
    served = _samples(last.body)
    assert served[("kwire_exporter_connections_open", ())] <= MAX_CONNECTIONS
    assert served[("kwire_exporter_connections_total", ("evicted",))] > 0  # the crowd made room for scrapes
    assert served[("kwire_exporter_connections_total", ("answered",))] >= 10 + outcomes[(200, True)]
    assert not [line for line in kwire.lines if "Traceback" in line]
