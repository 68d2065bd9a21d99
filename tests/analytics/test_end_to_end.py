"""End-to-end latency and lag in time (issue 47): kwire's figures against the clients' own times, any split
of the traffic against one pass, the caps, hostile input.

The truth (tests/problems.py's client_latencies: captures/problems/end-to-end.pcap.truth.jsonl, or
KWIRE_PROBLEMS_DIR's) is the producer's "sent" (each produce() call, in order; its "delivered" callbacks give each
record's offset) and each reader's "consumed" (the time its poll returned the record): never kwire's output. Other
clients' recordings (KafkaJS, a share group): tests/analytics/test_end_to_end_clients.py.
For the lag in time of commits (captures/problems/end-to-end-commits): each committer's "committed" (the
offset its commit returned, when it returned) against the producer's "sent" of the record at that offset.
"""

from __future__ import annotations

import random

import pytest

import kwire.analytics.end_to_end as E
from kwire.analytics import Aggregator
from kwire.analytics.end_to_end import EndToEndState
from kwire.analytics.end_to_end_doc import deliveries, document
from kwire.analytics.tags import E2E_COMMIT, E2E_READ, E2E_WRITE
from kwire.pipeline import analyze_files

from tests import problems as P

NAME = "end-to-end"
FETCH_WAIT_S = 0.5  # the readers' fetch.wait.max.ms / fetch_max_wait_ms (scripts/problem_roles.py)
SLACK_S = 0.05


def _exchanges(name: str) -> list:
    return list(analyze_files([str(P.capture(name))]))


def _wire(name: str) -> tuple[dict, dict]:
    agg = Aggregator()
    for ex in _exchanges(name):
        agg.add_exchange(ex)
    per = {}
    for key, found in deliveries(agg.analysis.end_to_end, agg.names):
        if key is not None:
            per[key[1]] = {(key[3], base): ns for base, ns in zip(found["bases"], found["latencies"])}
    return per, agg.document()["end_to_end"]


def test_latency_per_consumer_matches_the_clients_own_times():
    clients = P.client_latencies(NAME)
    wire, doc = _wire(NAME)
    assert len(clients) >= 3
    rounds = len(P.of(NAME, "begin_transaction"))
    stalled = 0
    for reader, offsets in clients.items():
        assert reader in wire, reader
        kwire = wire[reader]
        assert kwire, reader
        for key, latency_ns in kwire.items():
            assert key in offsets, (reader, key)  # a batch's first record: the one the client got first
            assert abs(latency_ns / 1e9 - offsets[key]) <= FETCH_WAIT_S + SLACK_S, (reader, key)
            stalled += offsets[key] > 5
        assert len(kwire) == rounds  # every transaction's batch delivered once to every reader
    assert stalled >= 2  # the transaction held open: the read_committed readers saw it late, as kwire does
    rows = {row["consumer"]: row for row in doc["consumers"]}
    for reader, offsets in clients.items():
        worst = max(offsets.values())
        assert abs(rows[reader]["latency_ms"]["max"] / 1e3 - worst) <= FETCH_WAIT_S + SLACK_S
        assert rows[reader]["redeliveries"] == 0 and rows[reader]["unmatched"] == 0


def test_time_lag_rises_behind_the_open_transaction_and_falls():
    clients = P.client_latencies(NAME)
    _, doc = _wire(NAME)
    for row in doc["partitions"]:
        worst = max(clients[row["consumer"]].values())
        lag = row["time_lag_ms"]
        assert lag["last"] == 0.0  # caught up at the end
        if worst > 5:  # held back behind the transaction: lag in time close to the stall, never above it
            assert worst - 1.0 <= lag["max"] / 1e3 <= worst + SLACK_S
        else:
            assert lag["max"] / 1e3 <= FETCH_WAIT_S + SLACK_S


COMMITS = "end-to-end-commits"


def _client_commit_lags(name: str) -> dict[str, list[tuple[int, float]]]:
    """group -> [(offset committed, seconds the record at it had waited, 0 if not yet sent)] from the truth."""
    events = P.events(name)
    sent = [e["ts"] for e in events if e["event"] == "sent"]
    offsets = [e["offset"] for e in events if e["event"] == "delivered" and e.get("error") is None]
    sent_at = dict(zip(offsets, sent))
    groups = {e["who"]: e["group"] for e in events if e["event"] == "started" and "group" in e}
    out: dict[str, list] = {}
    for e in events:
        if e["event"] == "committed" and e.get("error") is None:
            at = sent_at.get(e["offset"])
            out.setdefault(groups[e["who"]], []).append((e["offset"], e["ts"] - at if at is not None and at < e["ts"] else 0.0))
    return out


def test_commit_lag_in_time_matches_the_committers_own_commits():
    clients = _client_commit_lags(COMMITS)
    agg = Aggregator()
    for ex in _exchanges(COMMITS):
        agg.add_exchange(ex)
    wire = next(found for key, found in deliveries(agg.analysis.end_to_end, agg.names) if key is None)["commits"]
    assert len(clients) == 2
    for group, commits in clients.items():
        samples = wire[(group, "kwire-e2e-commits", 0)]
        assert [offset for _, offset, _ in samples] == [offset for offset, _ in commits]
        for (_, offset, lag_ns), (_, truth_s) in zip(samples, commits):
            assert lag_ns is not None and abs(lag_ns / 1e9 - truth_s) <= SLACK_S, (group, offset)
    rows = {row["group"]: row for row in agg.document()["end_to_end"]["commits"]}
    slow = rows["kwire-e2e-slow-group"]["time_lag_ms"]
    worst = max(lag for _, lag in clients["kwire-e2e-slow-group"])
    assert worst > 3  # the slow committer fell seconds behind in time, and caught up
    assert abs(slow["max"] / 1e3 - worst) <= SLACK_S and slow["last"] / 1e3 <= 0.5
    assert rows["kwire-e2e-py-group"]["time_lag_ms"]["max"] / 1e3 <= 2.0 + SLACK_S  # commits every 2 s
    assert rows["kwire-e2e-slow-group"]["commits"] == len(clients["kwire-e2e-slow-group"])


def test_commit_lag_is_the_age_of_the_oldest_record_not_committed_past():
    state = EndToEndState()
    for i in range(5):
        state.add(_write(i * 1000, i, 1))
    state.add(_commit(10_000, 2))  # records 2.. waiting since 2 us
    state.add(_commit(11_000, 9))  # past every write: caught up
    state.add(_commit(12_000, -1))  # before every write kept: not sampled
    row = document(state, {})["commits"][0]
    assert row["commits"] == 3 and row["offset_last"] == -1
    assert row["time_lag_ms"] == {"last": 0.0, "max": 0.008, "samples": 2}


@pytest.mark.parametrize("name", [NAME, COMMITS, "txn-stall", "share-redelivery", "clean-classic",
                                  "txn-offsets-bare"])
def test_any_split_merged_in_any_order_is_one_pass(name, monkeypatch):
    exchanges = _exchanges(name)
    whole = Aggregator()
    for ex in exchanges:
        whole.add_exchange(ex)
    expected = whole.document()["end_to_end"]
    rng = random.Random(47)
    for _ in range(3):
        cuts = sorted(rng.sample(range(1, len(exchanges)), 4))
        parts = []
        for lo, hi in zip([0] + cuts, cuts + [len(exchanges)]):
            agg = Aggregator()
            for ex in exchanges[lo:hi]:
                agg.add_exchange(ex)
            parts.append(agg)
        rng.shuffle(parts)
        merged = parts[0]
        for other in parts[1:]:
            merged.merge(other)
        assert merged.document()["end_to_end"] == expected


def test_share_group_redeliveries_are_not_latencies():
    agg = Aggregator()
    for ex in _exchanges("share-redelivery"):
        agg.add_exchange(ex)
    rows = [r for r in agg.document()["end_to_end"]["consumers"] if r["kind"] == "share"]
    assert rows and rows[0]["redeliveries"] > 0 and rows[0]["deliveries"] > 0


def test_a_share_range_over_many_batches_delivers_each():
    """A share consumer that fell behind is handed one range of acquired records spanning many batches
    (share-redelivery: offsets 8-28 in one range once the slow record's lock ran out; every producer batch is
    one record there): each write in it is delivered once, and each record acquired again is a redelivery,
    as the client's own `delivered` (its poll, with the delivery count) says."""
    got = P.of("share-redelivery", "delivered", "kwire-share-consumer")
    (row,) = P.document("share-redelivery")["end_to_end"]["consumers"]
    assert row["deliveries"] == len({e["offset"] for e in got})
    assert row["redeliveries"] == sum(1 for e in got if e["delivery_count"] > 1)


def _write(ts, base, count, topic="t", partition=0, producer="p", create=-1):
    return (E2E_WRITE, topic, producer, ts, base, count, create, partition)


def _read(ts, first, last, batches, consumer="c", offset=-1, topic="t", partition=0):
    return (E2E_READ, ts, "fetch", consumer, topic, partition, offset, first, last, batches, False, -1, 0)


def _commit(ts, offset, group="g", topic="t", partition=0):
    return (E2E_COMMIT, ts, group, topic, partition, offset)


def test_a_batch_fetched_again_is_a_redelivery():
    state = EndToEndState()
    for i in range(10):
        state.add(_write(i * 1000, i * 10, 10))
    state.add(_read(50_000, 0, 49, 5))
    state.add(_read(60_000, 0, 99, 10))  # restarted from 0: 5 again, 5 new
    state.add(_read(70_000, 90, 99, 1))  # the last one again
    doc = document(state, {})
    row = doc["consumers"][0]
    assert row["deliveries"] == 10 and row["redeliveries"] == 6
    assert row["latency_ms"]["max"] == 0.055  # offset 50 written at 5 us, first delivered at 60 us


def test_hostile_offsets_cost_what_was_carried():
    state = EndToEndState()
    state.add(_write(1, 0, 2**31 - 1))  # a Produce claiming two billion records
    state.add(_write(2, 2**62, 2**31 - 1))
    for i in range(1000):
        state.add(_write(10 + i, 2**40 + i, 1))
    state.add(_read(5_000, 0, 2**63 - 1, 1))  # an answer claiming every offset there is: one batch carried
    state.add(_read(6_000, 2**50, 2**50 + 5, 2, consumer="d"))  # offsets never written
    rows = {row["consumer"]: row for row in document(state, {})["consumers"]}
    assert rows["c"]["deliveries"] == 1 and rows["c"]["unmatched"] == 0
    assert rows["d"]["deliveries"] == 0 and rows["d"]["unmatched"] == 1


def test_caps_fold_the_same_on_any_split(monkeypatch):
    monkeypatch.setattr(E, "WRITES_CAP", 16)
    monkeypatch.setattr(E, "READS_CAP", 8)
    monkeypatch.setattr(E, "IDLE_CAP", 4)
    monkeypatch.setattr(E, "COMMITS_CAP", 4)
    obs = []
    for i in range(100):
        obs.append(_write(i * 10 + (i % 3 == 0), i * 2, 2, partition=i % 2))  # equal times too (ties)
        obs.append(_write(i * 10, i * 2, 2, partition=i % 2, producer="q"))
        obs.append(_read(i * 10 + 5, i * 2, i * 2 + 1, 1, partition=i % 2))
        obs.append(_read(i * 10 + 6, -1, -1, 0, offset=i, partition=i % 2))
        obs.append(_commit(i * 10 + 7 - (i % 4 == 0), i, group=f"g{i % 3}", partition=i % 2))
    one = EndToEndState()
    for ob in obs:
        one.add(ob)
    expected = document(one, {})
    bounds = expected["bounds"]
    assert bounds["writes"] == {"seen": 200, "kept": 16, "cap": 16}
    assert bounds["reads"]["kept"] == 8 and bounds["idle"]["folded"] and bounds["idle"]["kept"] == 4
    assert bounds["commits"] == {"seen": 100, "kept": 4, "cap": 4}
    rng = random.Random(1)
    for _ in range(5):
        shuffled = obs[:]
        rng.shuffle(shuffled)
        parts = [EndToEndState() for _ in range(3)]
        for i, ob in enumerate(shuffled):
            parts[i % 3].add(ob)
        merged = parts[0]
        for other in parts[1:]:
            merged.merge(other)
        assert document(merged, {}) == expected


def test_two_million_writes_stay_within_the_cap(monkeypatch):
    monkeypatch.setattr(E, "WRITES_CAP", 1 << 14)
    monkeypatch.setattr(E, "READS_CAP", 1 << 13)
    state = EndToEndState()
    for i in range(200_000):  # ten times fewer than the 2 million, at caps 16 and 32 times smaller
        state.add_write(_write(i, i, 1, partition=i % 7))
        state.add_read(_read(i + 5, i, i, 1, partition=i % 7, consumer=f"c{i % 3}"))
        # the packed bytes never past twice each cap: 40 bytes a write, 72 a read
        assert sum(len(kept) for kept in state.writes.packed.values()) <= 2 * E.WRITES_CAP * 40
        assert sum(len(kept) for kept in state.reads.packed.values()) <= 2 * E.READS_CAP * 72
    assert state.write_count <= 2 * E.WRITES_CAP
    assert sum(1 for _ in state.write_items()) == state.write_count
    assert sum(1 for _ in state.read_rows()) == state.reads.count
    doc = document(state, {})
    assert doc["bounds"]["writes"] == {"seen": 200_000, "kept": 1 << 14, "cap": 1 << 14}
    assert doc["bounds"]["reads"] == {"seen": 200_000, "kept": 1 << 13, "cap": 1 << 13}
    # the earliest kept: reads of the first 8,192 writes, each delivered once
    assert sum(row["deliveries"] for row in doc["consumers"]) == 1 << 13


def test_the_terminal_table_shows_each_consumer():
    from rich.console import Console

    from kwire.render.stats_view import stats_view

    console = Console(width=160, record=True, file=open("/dev/null", "w"))
    console.print(stats_view(P.document(NAME)))
    text = console.export_text()
    assert "End to end" in text
    for reader in P.client_latencies(NAME):
        assert reader in text


@pytest.mark.parametrize("name", [NAME, COMMITS])
def test_the_timeline_holds_the_rows_figures_over_time(name):
    section = P.document(name)["end_to_end"]
    timeline = section["timeline"]
    assert timeline["bucket_s"] == 1 and timeline["series"]["latency"] == len(section["consumers"])
    consumers = {row["consumer"]: row for row in section["consumers"]}
    for series in timeline["latency"]:
        values = [v for v in series["values_ms"] if v is not None]
        assert max(values) == consumers[series["name"]]["latency_ms"]["max"]
        assert len(values) <= consumers[series["name"]]["deliveries"]
    groups = {row["group"]: row for row in section["commits"]}
    for series in timeline["time_lag"]:
        values = [v for v in series["values_ms"] if v is not None]
        if series["kind"] == "commits":
            assert max(values) == groups[series["name"]]["time_lag_ms"]["max"]
        else:
            assert max(values) == consumers[series["name"]]["time_lag_max_ms"]
    if name == COMMITS:  # the slow committer's lag rises to what the client saw, and falls once it works fast
        slow = next(s for s in timeline["time_lag"] if s["name"] == "kwire-e2e-slow-group")["values_ms"]
        values = [v for v in slow if v is not None]
        peak = values.index(max(values))
        worst = max(lag for _, lag in _client_commit_lags(COMMITS)["kwire-e2e-slow-group"])
        assert abs(values[peak] / 1e3 - worst) <= SLACK_S and values[0] < values[peak] / 3
        assert all(v <= 500 for v in values[peak + 2:])


def test_transactional_commits_are_commits_too():
    """captures/problems/txn-offsets-bare: two TxnOffsetCommits (an exactly-once app's, and a bare one setting
    another group's offset) of kwire-ledger[0], whose 6 records were produced at once (the truth's "produced"):
    each commit's lag is its "sent_offsets" time less the production's."""
    name = "txn-offsets-bare"
    events = P.events(name)
    produced = next(e["ts"] for e in events if e["event"] == "produced")
    truth = {e["group"]: e["ts"] - produced for e in events if e["event"] == "sent_offsets"}
    rows = {row["group"]: row for row in P.document(name)["end_to_end"]["commits"]}
    assert set(rows) == set(truth) and len(truth) == 2
    for group, lag_s in truth.items():
        assert rows[group]["commits"] == 1 and rows[group]["topic"] == "kwire-ledger"
        assert abs(rows[group]["time_lag_ms"]["last"] / 1e3 - lag_s) <= SLACK_S, group
