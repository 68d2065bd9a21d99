"""End-to-end latency through a relay (a TLS terminator or a proxy, both legs in one capture): each Fetch answer
is on the wire twice, the broker's leg first, with one correlation id; it is one delivery, timed at the leg
nearer the consumer, never a redelivery (kwire.analytics.end_to_end_doc._own).

The real case: captures/tls, both legs of stunnel; the clients' logs say each Produce was sent once, and the
consumer read each batch once."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from kwire.analytics import Aggregator
from kwire.analytics.end_to_end_doc import _own
from kwire.analytics.relay import RELAY_WINDOW_NS
from kwire.pipeline import analyze_files
from kwire.tls import KeyLog

ROOT = Path(__file__).resolve().parents[2]
TLS = sorted((ROOT / "captures" / "tls").glob("*.pcap"))
_SENT_PRODUCE = re.compile(r"Sending request \d+ ProduceRequest|\"message\":\"Request Produce\(")


def _event(ts, corr, leg, first=0, last=4, offset=0, batches=1):
    return (ts, offset, first, last, batches, False, corr, leg)


def test_the_copy_on_the_brokers_leg_is_left_out():
    kept = _own([_event(2_000, 9, leg=2), _event(1_000, 9, leg=1)])
    assert kept == [_event(2_000, 9, leg=2)[:6]]  # the later: the leg nearer the consumer


@pytest.mark.parametrize("other", [
    _event(2_000, 10, leg=2),  # another answer (its own correlation id): a consumer fetching again
    _event(2_000, 9, leg=1),  # the same connection's address: not a relay
    _event(1_000 + RELAY_WINDOW_NS + 1, 9, leg=2),  # too long after
    _event(2_000, 9, leg=2, first=5, last=9),  # other records
])
def test_other_answers_stay(other):
    assert len(_own([_event(1_000, 9, leg=1), other])) == 2


@pytest.mark.parametrize("capture", TLS, ids=lambda p: p.name)
def test_both_legs_of_a_tls_terminator_deliver_once(capture):
    keys = KeyLog()
    keys.add_text(Path(str(capture) + ".keys").read_text())
    agg = Aggregator()
    for ex in analyze_files([str(capture)], keys=keys):
        agg.add_exchange(ex)
    (consumer,) = agg.document()["end_to_end"]["consumers"]
    sent = len(_SENT_PRODUCE.findall(Path(str(capture) + ".truth.log").read_text()))
    assert consumer["redeliveries"] == 0 and consumer["deliveries"] == sent
