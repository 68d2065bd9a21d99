"""Issue 25, memory that grew with distinct names or entries: every figures table keyed by a name
from the wire is capped with its overflow folded and counted (one policy, kwire.native.caps),
key log text is split a slice at a time, and a TLS connection's state is freed without the cycle
collector. Each test fails on the code before the fix.
"""

from __future__ import annotations

import gc
import tracemalloc

from kwire.analytics.aggregate import Aggregator
from kwire.capture.files import read_captures
from kwire.pipeline import Pipeline, analyze_files
from tests.hostile import generators

CAP = 1_024  # kwire.native.caps.CAPS of client ids, brokers, share groups (literal: the old code has none)


def _aggregate(exchanges) -> Aggregator:
    agg = Aggregator()
    for ex in exchanges:
        agg.add_exchange(ex)
    return agg


def test_tables_of_names_from_the_wire_are_capped_and_fold_the_rest(tmp_path):
    """3,000 client ids, brokers and share groups, one Fetch over 3,000 partitions: every table keeps
    at most its cap and one (others) row, and nothing is lost from the totals."""
    path = tmp_path / "names.pcap"
    generators.many_names(path)
    exchanges = list(analyze_files([str(path)]))
    document = _aggregate(exchanges).document()
    for key in ("client_ids", "brokers", "share_groups"):
        table = document[key]
        assert len(table) <= CAP + 1, (key, len(table))
        assert "(others)" in table
        counted = "exchanges" if key != "share_groups" else "share_acknowledges"
        total = document["totals"]["exchanges"] if key != "share_groups" else 3_000
        assert sum(row[counted] for row in table.values()) == total, key
        assert document["caps"][key]["folded"]
    partitions = sum(len(parts) for parts in document["partitions"].values())
    assert partitions <= 16_384 + 1


def test_a_capped_table_merges_to_the_same_whatever_the_split(tmp_path):
    """The kept keys do not depend on how the traffic was split (kwire stats --jobs, spark, live)."""
    path = tmp_path / "names.pcap"
    generators.many_names(path)
    exchanges = list(analyze_files([str(path)]))
    whole = _aggregate(exchanges).document()
    odd, even = _aggregate(exchanges[1::2]), _aggregate(exchanges[::2])
    merged = even.merge(odd).document()
    for key in ("client_ids", "brokers", "share_groups", "partitions", "caps"):
        assert merged[key] == whole[key], key


def test_key_log_text_is_split_a_slice_at_a_time():
    """12 MiB of two-character lines (a pcapng Decryption Secrets Block, a key log file): the text
    was split into all its lines at once (4 million strings)."""
    from kwire.tls import KeyLog

    text = b"ab\n" * (4 << 20)
    keys = KeyLog()
    tracemalloc.start()
    try:
        keys.add_secrets(0x544C534B, text)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert keys.lines == 4 << 20 and keys.bad_lines == 4 << 20
    assert peak < 48 << 20, peak


def test_a_key_log_of_many_client_randoms_is_capped_and_says_so(tmp_path):
    from kwire.keyfile import read_key_file

    path = tmp_path / "keys.log"
    path.write_bytes(b"".join(b"CLIENT_RANDOM %064x %096x\n" % (i, i) for i in range(200_010)))
    keys, warning = read_key_file(str(path))
    assert len(keys) == 200_000 and keys.dropped == 10
    assert warning and "10 secrets" in warning


def test_tls_connections_are_freed_without_the_cycle_collector(tmp_path):
    """2,000 connections of one ClientHello each: a TLS stream and its session held each other, so
    every connection ended waited for the collector (kwire runs it rarely)."""
    from kwire.tls.session import TlsSession

    path = tmp_path / "hellos.pcap"
    generators.client_hellos(path, 1)
    gc.collect()
    gc.disable()
    try:
        pipeline = Pipeline()
        for packet in read_captures([str(path)]):
            pipeline.feed(packet)
        pipeline.finish()
        del pipeline
        alive = sum(1 for o in gc.get_objects() if type(o) is TlsSession)
    finally:
        gc.enable()
    assert alive == 0, alive


def test_open_connections_are_capped_for_the_memory_of_a_tls_connection():
    from kwire.native.tcp_flows import FlowTable

    assert FlowTable().max_connections <= 65_536
