#!/usr/bin/env python3
"""How fast kwire.tls decrypts: MB/s of ciphertext decrypted and handed on, per cipher suite.

Two measurements, both of the TLS layer alone (TlsStream fed what TCP would hand it, the inner
consumer a no-op that asks for nothing):
- synthetic: a conversation built with tests/tls/build.py (`cryptography` sealing records the way
  a TLS stack does), RECORDS application-data records of SIZE bytes each, handed over per record
  as TCP holds them for the stream (a tuple of 1448-byte segment payloads), per suite;
- capture (--capture FILE, e.g. scripts/record_tls.py's bulk-fetch): the capture's TCP reassembled
  first (not timed), then every TLS connection's deliveries fed to a TlsStream with the key log
  FILE.keys; beside it, the time kwire.tcp + kwire.kafka take for the capture's plaintext leg
  (terminator <-> broker: the same Kafka bytes in the clear), for scale.

    python scripts/bench_tls.py                      # synthetic, every suite kind
    python scripts/bench_tls.py --capture /tmp/tls-bulk-fetch.pcap
Best of --repeat runs.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import click

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from kwire.tls import KeyLog, TlsStream  # noqa: E402
from tests.tls.build import Conversation  # noqa: E402
from tests.tls.helpers import connection  # noqa: E402

SUITES = [(0x1301, False), (0x1302, False), (0x1303, False), (0xC02F, False), (0xC030, False), (0xCCA8, False),
          (0xC027, False), (0xC027, True), (0xC013, False)]


class Null:
    def data(self, direction, ts_ns, data) -> int:
        return 0

    def gap(self, direction, ts_ns, size) -> None:
        pass

    def close(self, ts_ns, reason) -> None:
        pass


def _segments(rec: bytes, mss: int = 1448):
    """What TCP hands over for one record: its bytes, or the held segments' payloads as a tuple."""
    if len(rec) <= mss:
        return rec
    return tuple(rec[i:i + mss] for i in range(0, len(rec), mss))


def synthetic(suite_id: int, etm: bool, records: int, size: int, repeat: int) -> tuple[float, int]:
    conv = Conversation(suite_id, etm=etm)
    payload = bytes(range(256)) * (size // 256)
    start = len(conv.wire)
    for _ in range(records):
        conv.send(1, payload)
    keys = KeyLog()
    keys.add_text(conv.keylog)
    handshake = conv.wire[:start]
    app = [_segments(rec) for _, rec in conv.wire[start:]]
    total = sum(sum(map(len, rec)) if type(rec) is tuple else len(rec) for rec in app)
    best = float("inf")
    for _ in range(repeat):
        stream = TlsStream(connection(), lambda conn: Null(), keys)
        for d, rec in handshake:
            stream.data(d, 0, rec)
        data = stream.data
        t0 = time.perf_counter()
        for pieces in app:
            data(1, 1, pieces)
        best = min(best, time.perf_counter() - t0)
        assert stream.info.records_decrypted >= records and not stream.info.records_failed
    return best, total


def capture_deliveries(path: Path, tls_port: int):
    """Every delivery TCP makes for the TLS connections (held for the records), not timed."""
    from tests.tls.capture_streams import run_streams

    class Tape:
        def __init__(self, conn):
            self.conn = conn
            self.calls = []
            self.inner = TlsStream(conn, lambda c: Null(), None)  # only for the record needs

        def data(self, d, ts, data):
            self.calls.append((d, ts, data))
            return self.inner.data(d, ts, data)

        def gap(self, d, ts, size):
            self.calls.append((d, ts, size))

        def close(self, ts, reason):
            pass

    tapes = run_streams([path], Tape)
    return [t for t in tapes.values() if tls_port in (t.conn.a[1], t.conn.b[1])]


def plaintext_reference(path: Path, broker_port: int) -> tuple[float, int]:
    """kwire.tcp + kwire.kafka over the capture's plaintext leg (its packets only)."""
    from kwire.capture.files import read_captures
    from kwire.native.kafka_connection import KafkaLayer
    from kwire.native.net_decode import decode_segment
    from kwire.native.tcp_flows import FlowTable

    segments = [s for s in (decode_segment(p) for p in read_captures([path])) if s is not None
                and broker_port in (s.src_port, s.dst_port)]
    total = sum(len(s.payload) for s in segments)
    t0 = time.perf_counter()
    table = FlowTable(KafkaLayer(lambda raw: None).open)
    for seg in segments:
        table.feed(seg)
    table.flush(segments[-1].ts_ns)
    return time.perf_counter() - t0, total


@click.command()
@click.option("--records", default=2000, show_default=True)
@click.option("--size", default=16384, show_default=True, help="plaintext bytes per record")
@click.option("--repeat", default=3, show_default=True)
@click.option("--capture", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--tls-port", default=9093, show_default=True)
@click.option("--broker-port", default=9092, show_default=True)
def main(records, size, repeat, capture, tls_port, broker_port) -> None:
    """Measure kwire.tls alone: MB/s of ciphertext decrypted and handed on."""
    from kwire.tls.suites import SUITES as ALL

    if capture is None:
        for suite_id, etm in SUITES:
            seconds, total = synthetic(suite_id, etm, records, size, repeat)
            name = ALL[suite_id].name + (" (encrypt_then_mac)" if etm else "")
            print(f"{name:55s} {total / seconds / 1e6:8.1f} MB/s  {seconds / records * 1e6:6.1f} us/record")
        return
    keys = KeyLog()
    keys.add_text(Path(str(capture) + ".keys").read_text())
    tapes = capture_deliveries(capture, tls_port)
    total = sum((sum(map(len, x)) if type(x) is tuple else len(x)) if not isinstance(x, int) else 0
                for t in tapes for _, _, x in t.calls)
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        for tape in tapes:
            stream = TlsStream(tape.conn, lambda c: Null(), keys)
            for d, ts, x in tape.calls:
                if isinstance(x, int):
                    stream.gap(d, ts, x)
                else:
                    stream.data(d, ts, x)
            stream.close(0, "end")
        best = min(best, time.perf_counter() - t0)
    print(f"TLS layer on {capture.name}: {total / 1e6:.1f} MB of TLS in {best:.3f} s = {total / best / 1e6:.1f} MB/s")
    plain_s, plain_total = plaintext_reference(capture, broker_port)
    print(f"kwire.tcp + kwire.kafka on its plaintext leg: {plain_total / 1e6:.1f} MB in {plain_s:.3f} s = "
          f"{plain_total / plain_s / 1e6:.1f} MB/s (for scale)")


if __name__ == "__main__":
    main()
