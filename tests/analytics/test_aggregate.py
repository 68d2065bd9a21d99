"""The Aggregator: figures on a real capture, and any split + merge gives the same document."""

import json
import pickle
import random
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from kwire.analytics import Aggregator, summary_json
from kwire.native.exchange_facts import exchange_row, partition_rows, topic_names
from kwire.model import NO_RESPONSE, PAIRED, Exchange
from kwire.pipeline import analyze_files

QUICK = str(Path(__file__).parent / "data" / "quick.pcap")


def _facts():
    return [(exchange_row(ex), partition_rows(ex), topic_names(ex)) for ex in analyze_files([QUICK])]


FACTS = _facts()


def _document(facts):
    agg = Aggregator()
    for f in facts:
        agg.add(*f)
    return agg.document()


def test_quick_capture_figures():
    doc = _document(FACTS)
    totals = doc["totals"]
    assert totals["exchanges"] == 47
    assert (totals["paired"], totals["no_response"], totals["no_request"]) == (44, 3, 0)
    assert totals["latency_ms"]["count"] == 44
    assert totals["latency_ms"]["max"] == 3001.216  # the consumer's JoinGroup waits out the rebalance
    assert doc["slowest"][0]["api"] == "JoinGroup"
    assert doc["apis"]["Produce"]["exchanges"] == 4
    # ApiVersions v3 refused and retried lower: version negotiation, not an error (exchange_kinds)
    assert doc["apis"]["ApiVersions"]["versions"]["3"]["errors"] == {}
    assert doc["apis"]["ApiVersions"]["versions"]["3"]["negotiations"] == 7
    assert doc["apis"]["ApiVersions"]["versions"]["3"]["failed"] == 0
    t1 = doc["partitions"]["t1"]
    assert sum(p["produce_records"] for p in t1.values()) == 50
    assert sum(p["fetch_records"] for p in t1.values()) == 50
    assert {k: p["lag_max"] for k, p in t1.items()} == {"0": 13, "1": 12, "2": 13, "3": 12}
    assert doc["unanswered"]["count"] == 3
    assert sum(doc["timeline"]["exchanges"]) == 47
    assert set(doc["brokers"]) == {"127.0.0.1:45803", "127.0.0.1:44915", "127.0.0.1:36221"}
    assert doc["client_ids"]["rdkafka"]["exchanges"] == 47
    assert json.loads(summary_json(doc)) == doc


@settings(max_examples=25, deadline=None)
@given(st.integers(1, 8), st.integers(0, 2**32))
def test_any_split_and_order_gives_the_same_document(parts, seed):
    whole = summary_json(_document(FACTS))
    rng = random.Random(seed)
    aggs = [Aggregator() for _ in range(parts)]
    shuffled = list(FACTS)
    rng.shuffle(shuffled)
    for f in shuffled:
        rng.choice(aggs).add(*f)
    rng.shuffle(aggs)
    merged = aggs[0]
    for a in aggs[1:]:
        merged.merge(a)
    assert summary_json(merged.document()) == whole


def _fetch(ts, tid_or_name, lag, key="TopicId"):
    ex = Exchange(connection_id=1, client="c:1", broker="b:2", status=PAIRED, correlation_id=ts, api_key=1,
                  api="Fetch", api_version=16, client_id="x", request_ts_ns=ts, response_ts_ns=ts + 10,
                  request_size=10, response_size=10,
                  response={"Responses": [{key: tid_or_name, "Partitions": [{"PartitionIndex": 0, "Records": None}]}]})
    ex.extra["lag"] = [{"topic": tid_or_name, "partition": 0, "fetch_offset": 0, "high_watermark": lag, "lag": lag}]
    return ex


def test_topic_ids_are_named_and_merged_with_named_rows():
    agg = Aggregator()
    agg.add_exchange(_fetch(1_000_000_000, "ID1", 5))
    agg.add_exchange(_fetch(3_000_000_000, "t", 2, key="TopicName"))
    meta = Exchange(connection_id=2, client="c:3", broker="b:2", status=PAIRED, correlation_id=1, api_key=3,
                    api="Metadata", api_version=12, request_ts_ns=2_000_000_000, response_ts_ns=2_000_000_001,
                    response={"Topics": [{"TopicId": "ID1", "Name": "t"}]})
    agg.add_exchange(meta)
    doc = agg.document()
    assert list(doc["partitions"]) == ["t"]
    part = doc["partitions"]["t"]["0"]
    assert (part["fetches"], part["lag_samples"], part["lag_last"], part["lag_max"]) == (2, 2, 2, 5)
    assert part["lag_timeline"] == [5, None, 2]


def test_lag_last_ties_take_the_larger_lag():
    a, b = Aggregator(), Aggregator()
    a.add_exchange(_fetch(5, "t", 3, key="TopicName"))
    b.add_exchange(_fetch(5, "t", 9, key="TopicName"))
    doc = a.merge(b).document()
    assert doc["partitions"]["t"]["0"]["lag_last"] == 9


def test_no_request_and_null_client_id_labels():
    agg = Aggregator()
    agg.add_exchange(Exchange(connection_id=1, client="c:1", broker="b:2", status="no_request", correlation_id=4,
                              response_ts_ns=10, response_size=30))
    agg.add_exchange(Exchange(connection_id=1, client="c:1", broker="b:2", status=NO_RESPONSE, correlation_id=5,
                              api_key=18, api="ApiVersions", api_version=3, client_id=None, request_ts_ns=20,
                              request_size=40))
    doc = agg.document()
    assert doc["apis"]["(unknown)"]["versions"]["(unknown)"]["no_request"] == 1
    assert doc["client_ids"]["(null)"]["no_response"] == 1
    assert doc["unanswered"]["by_api"] == {"ApiVersions": 1}
    assert doc["span"]["seconds"] == 1e-08
    assert doc["totals"]["requests_per_s"] == 2e8  # 2 exchanges over a 10 ns span


def test_empty_and_single_exchange_documents():
    doc = Aggregator().document()
    assert doc["totals"]["exchanges"] == 0 and doc["totals"]["latency_ms"]["p50"] is None
    assert doc["timeline"]["exchanges"] == [] and doc["span"]["start"] is None
    agg = Aggregator()
    agg.add_exchange(Exchange(connection_id=1, client="c:1", broker="b:2", status=NO_RESPONSE, correlation_id=5,
                              api_key=18, api="ApiVersions", api_version=3, request_ts_ns=7, request_size=40))
    assert agg.document()["totals"]["requests_per_s"] is None  # a span of 0: no rate


def test_id_and_name_series_merged_past_their_limit():
    agg = Aggregator()
    # 200 lag samples under the id and 200 others under the name, one per second: each series fits
    # its 256-bucket limit alone, their union does not.
    for i in range(200):
        agg.add_exchange(_fetch((2 * i) * 1_000_000_000, "ID1", i))
        agg.add_exchange(_fetch((2 * i + 1) * 1_000_000_000, "t", i, key="TopicName"))
    agg.add_name("ID1", "t")
    doc = agg.document()
    part = doc["partitions"]["t"]["0"]
    assert part["lag_samples"] == 400 and part["lag_max"] == 199
    assert len(part["lag_timeline"]) == len(doc["timeline"]["exchanges"]) <= 120
    assert max(v for v in part["lag_timeline"] if v is not None) == 199


def test_tables_hold_each_exchange_counted_in_each_group():
    """The cells an Aggregator keeps (per api version, client id, broker) and adds when the tables are
    read give each table what Figures.add of every row of that group gives, with rows in the order the
    groups first came; so too when pickled half way (a worker's part)."""
    from kwire.analytics.figures import Figures

    expected: dict[str, dict] = {"total": {}, "api": {}, "client": {}, "broker": {}}
    for row, _, _ in FACTS:
        api = row["api"]
        for table, key in (("total", None), ("api", (api, str(row["api_version"])) if api else ("(unknown)",) * 2),
                           ("client", row["client_id"] if api is None or row["client_id"] is not None else "(null)"),
                           ("broker", row["broker"])):
            key = "(unknown)" if table == "client" and api is None else key
            expected[table].setdefault(key, Figures()).add(row)
    half = len(FACTS) // 2
    agg = Aggregator()
    for f in FACTS[:half]:
        agg.add(*f)
    agg = pickle.loads(pickle.dumps(agg))
    for f in FACTS[half:]:
        agg.add(*f)
    for table, got in (("api", agg.by_api_version), ("client", agg.by_client_id), ("broker", agg.by_broker)):
        assert [key for key, _ in got.items()] == list(expected[table])
        assert {key: f.document(1.0) for key, f in got.items()} == \
            {key: f.document(1.0) for key, f in expected[table].items()}
    assert agg.total.document(1.0) == expected["total"][None].document(1.0)
