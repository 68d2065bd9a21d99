"""kwire.analytics.findings_delivery: a request relayed (both legs of a TLS terminator or a proxy in one
capture) is one send, not a retry; a producer's own resend is still one.

The real case: every capture of captures/tls holds both legs of stunnel (client <-> stunnel, decrypted with
the key log, and stunnel <-> broker in plaintext), so each Produce is on the wire twice, with the same
correlation id; the clients' own logs say each was sent once."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from kwire.analytics import Aggregator
from kwire.analytics.findings_delivery import relayed_copies
from kwire.analytics.relay import RELAY_WINDOW_NS
from kwire.pipeline import analyze_files
from kwire.tls import KeyLog

ROOT = Path(__file__).resolve().parents[2]
TLS = sorted((ROOT / "captures" / "tls").glob("*.pcap"))
# a Produce the client sent, as its DEBUG log says: kafka-python, KafkaJS
_SENT_PRODUCE = re.compile(r"Sending request \d+ ProduceRequest|\"message\":\"Request Produce\(")


def _ev(ts: int, broker: str, correlation_id: int, client: str = "10.0.0.1:5000", api: str = "Produce") -> tuple:
    return (ts, client, broker, correlation_id, api)


def test_a_copy_on_the_other_leg_is_relayed():
    first = _ev(1_000, "10.0.0.9:9093", 7)
    copy = _ev(1_150, "10.0.0.9:9092", 7, client="10.0.0.9:41000")
    assert relayed_copies([first, copy]) == 1


@pytest.mark.parametrize("later", [
    _ev(2_000, "10.0.0.9:9093", 8),  # a retry: a new request, its own correlation id
    _ev(2_000, "10.0.0.9:9093", 7, client="10.0.0.1:5001"),  # a new connection to the same broker address
    _ev(1_000 + RELAY_WINDOW_NS + 1, "10.0.0.9:9092", 7),  # too long after to be a relay of it
    _ev(1_150, "10.0.0.9:9092", 7, api="Fetch"),  # another api
])
def test_a_resend_is_not_relayed(later):
    assert relayed_copies([_ev(1_000, "10.0.0.9:9093", 7), later]) == 0


def test_a_relayed_retry_counts_once_per_send():
    """Two sends of one batch, each seen on both legs: four on the wire, two sends, one of them a retry."""
    sends = [_ev(1_000, "b:9093", 3), _ev(1_100, "b:9092", 3, client="p:1"),
             _ev(9_000, "b:9093", 5), _ev(9_100, "b:9092", 5, client="p:1")]
    assert 4 - relayed_copies(sends) == 2


@pytest.mark.parametrize("capture", TLS, ids=lambda p: p.name)
def test_both_legs_of_a_tls_terminator_are_no_retry(capture):
    agg = Aggregator()
    produces = 0
    keys = KeyLog()
    keys.add_text(Path(str(capture) + ".keys").read_text())
    for ex in analyze_files([str(capture)], keys=keys):
        agg.add_exchange(ex)
        produces += ex.api == "Produce"
    sent = len(_SENT_PRODUCE.findall(Path(str(capture) + ".truth.log").read_text()))
    assert sent and produces == 2 * sent  # each request on both legs, as the client's log sent it once
    assert [f for f in agg.document()["findings"] if f["kind"] == "produce_retry"] == []
