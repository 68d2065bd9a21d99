"""Real record batches: librdkafka (confluent-kafka) produces to its built-in mock cluster with each codec,
then a raw Fetch v4 over a socket returns the stored batches byte for byte, which we decode."""

from __future__ import annotations

import socket
import struct

import pytest

from kwire.native.codec_records import decode_records, summarize_records

ck = pytest.importorskip("confluent_kafka")


def _string(s: bytes) -> bytes:
    return struct.pack(">h", len(s)) + s


def _fetch_v4(host: str, port: int, topic: bytes, partition: int, offset: int = 0) -> bytes:
    """Send one Fetch v4 (isolation READ_UNCOMMITTED) and return that partition's raw records bytes."""
    body = struct.pack(">iiiib", -1, 500, 1, 4 << 20, 0) + struct.pack(">i", 1) + _string(topic) + \
        struct.pack(">i", 1) + struct.pack(">iqi", partition, offset, 4 << 20)
    msg = struct.pack(">hhi", 1, 4, 1) + _string(b"kwire-test") + body
    with socket.create_connection((host, port), timeout=10) as s:
        s.sendall(struct.pack(">i", len(msg)) + msg)

        def recv(n: int) -> bytes:
            out = b""
            while len(out) < n:
                chunk = s.recv(n - len(out))
                assert chunk, "mock broker closed the connection"
                out += chunk
            return out

        (n,) = struct.unpack(">i", recv(4))
        resp = recv(n)
    pos = 4 + 4  # correlation id, throttle time
    (n_topics,) = struct.unpack_from(">i", resp, pos)
    pos += 4
    assert n_topics == 1
    (name_len,) = struct.unpack_from(">h", resp, pos)
    pos += 2 + name_len + 4  # name, partition count (1)
    _, error, _, _ = struct.unpack_from(">ihqq", resp, pos)
    assert error == 0
    pos += 4 + 2 + 8 + 8
    (n_aborted,) = struct.unpack_from(">i", resp, pos)
    pos += 4 + max(n_aborted, 0) * 16
    (size,) = struct.unpack_from(">i", resp, pos)
    pos += 4
    return resp[pos : pos + size]


def produce_and_fetch(codec: str, messages, *, transactional: bool = False) -> bytes:
    conf = {"test.mock.num.brokers": 1, "bootstrap.servers": "", "compression.codec": codec,
            "linger.ms": 20, "log_level": 0}
    if transactional:
        conf["transactional.id"] = "kwire-tx"
    p = ck.Producer(conf)
    if transactional:
        p.init_transactions(10)
        p.begin_transaction()
    for key, value, headers in messages:
        p.produce("t", key=key, value=value, headers=headers, partition=0, timestamp=1_700_000_000_000)
    if transactional:
        p.commit_transaction(10)
    assert p.flush(10) == 0
    broker = next(iter(p.list_topics(timeout=10).brokers.values()))
    return fetch_all(broker.host, broker.port, b"t", 0, len(messages))


def _next_offset(raw: bytes) -> int:
    """One past the last offset of the whole batches in `raw`, read from their headers (base offset, length,
    and the last offset delta at byte 23), not by kwire."""
    pos, end = 0, 0
    while pos + 27 <= len(raw):
        base, length = struct.unpack_from(">qi", raw, pos)
        if pos + 12 + length > len(raw):
            break
        (delta,) = struct.unpack_from(">i", raw, pos + 23)
        end = base + delta + 1
        pos += 12 + length
    return end


def fetch_all(host: str, port: int, topic: bytes, partition: int, count: int) -> bytes:
    """The partition's batches from offset 0 until `count` records: the mock broker answers a Fetch with one
    batch when the producer's linger split the messages into several (librdkafka 2.x), so fetch again from
    the next offset, as a consumer does."""
    raw, offset = b"", 0
    for _ in range(count + 1):
        more = _fetch_v4(host, port, topic, partition, offset)
        following = _next_offset(more)
        if not more or following <= offset:
            break
        raw, offset = raw + more[: _whole(more)], following
        if offset >= count:
            break
    return raw


def _whole(raw: bytes) -> int:
    """The bytes of the whole batches at the start of `raw`."""
    pos = 0
    while pos + 12 <= len(raw):
        (length,) = struct.unpack_from(">i", raw, pos + 8)
        if pos + 12 + length > len(raw):
            break
        pos += 12 + length
    return pos


CODECS = ["none", "gzip", "snappy", "lz4", "zstd"]


def _codecs(raw: bytes) -> list[str]:
    """Each whole batch's codec from its attributes' low three bits (int16 at byte 21), not by kwire."""
    pos, out = 0, []
    while pos + 23 <= len(raw):
        (length,) = struct.unpack_from(">i", raw, pos + 8)
        if pos + 12 + length > len(raw):
            break
        (attributes,) = struct.unpack_from(">h", raw, pos + 21)
        out.append(CODECS[attributes & 7])
        pos += 12 + length
    return out


MESSAGES = [(b"key-%d" % i, (b"value %d " % i) * (i + 1), [("h", b"x%d" % i)]) for i in range(50)] + \
    [(None, b"\x00\xff binary", None), (b"no value", None, None)]


@pytest.mark.parametrize("codec", ["none", "gzip", "snappy", "lz4", "zstd"])
def test_librdkafka_batches(codec):
    raw = produce_and_fetch(codec, MESSAGES)
    summary = summarize_records(raw)
    out = decode_records(raw)
    assert "error" not in out and out["partial_tail"] == 0 and out["size"] == len(raw) > 0
    assert all(b["Magic"] == 2 and b["CrcValid"] and "error" not in b for b in out["batches"])
    # librdkafka sends a batch uncompressed when the codec would not shrink it (a linger-split tail of two
    # small records, say), so each batch's codec is read from its own attribute bits, not assumed
    assert [b["Attributes"]["Compression"] for b in out["batches"]] == _codecs(raw)
    assert codec in _codecs(raw)
    assert summary["batches"] == [{k: v for k, v in b.items() if k not in ("Records", "DecompressedSize")}
                                  for b in out["batches"]]
    records = [r for b in out["batches"] for r in b["Records"]]
    assert [r["Offset"] for r in records] == list(range(len(MESSAGES)))
    assert all(r["Timestamp"] == 1_700_000_000_000 for r in records)
    for r, (key, value, headers) in zip(records, MESSAGES):
        assert r["Key"] == (None if key is None else key.decode())
        assert r["Value"] == (None if value is None else value.decode() if value.isascii() else
                              {"hex": value.hex()})
        assert r["Headers"] == [{"Key": k, "Value": v.decode()} for k, v in (headers or [])]
    assert sum(b["RecordCount"] for b in out["batches"]) == len(MESSAGES)
    assert out["batches"][-1]["LastOffset"] == len(MESSAGES) - 1


def test_librdkafka_transactional_batch():
    # (the mock cluster writes no commit marker, so control batches are tested on synthetic ones)
    raw = produce_and_fetch("lz4", MESSAGES[:5], transactional=True)
    out = decode_records(raw)
    assert "error" not in out
    (data,) = out["batches"]
    assert data["Attributes"]["IsTransactional"] and not data["Attributes"]["IsControl"]
    assert data["ProducerId"] >= 0 and data["ProducerEpoch"] >= 0 and data["BaseSequence"] == 0
    assert [r["Key"] for r in data["Records"]] == ["key-%d" % i for i in range(5)]


def test_librdkafka_fetch_cut_anywhere_is_a_partial_tail():
    raw = produce_and_fetch("zstd", MESSAGES)
    sizes = [b["SizeBytes"] for b in summarize_records(raw)["batches"]]
    for cut in range(0, len(raw), 7):
        out = summarize_records(raw[:cut])
        assert "error" not in out
        whole = [b for b in out["batches"] if not b.get("partial")]
        assert [b["SizeBytes"] for b in whole] == sizes[: len(whole)]
        assert sum(sizes[: len(whole)]) + out["partial_tail"] == cut
