"""Lengths read from the wire cost nothing until checked; decompression and record decoding are bounded
per record set; capture records claiming huge lengths are refused before anything is read for them.

Memory is measured with tracemalloc (peak of Python allocations during the call).
"""

from __future__ import annotations

import gzip
import io
import random
import struct
import tracemalloc

import pytest

from kwire.capture.files import open_capture
from kwire.capture.source import MAX_RECORD
from kwire.native.codec_budget import RecordBudget
from kwire.native.codec_records import decode_records
from kwire.errors import CaptureError, DecodeError
from kwire.native.framing import Framer
from tests.kafka.frames import finder
from tests.capture import builders as b
from tests.codec.test_records_encoder import GZIP, NONE, v2_batch
from tests.fuzz import targets


def peak(fn) -> int:
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


HUGE = [b"\x7f\xff\xff\xff", b"\xff\xff\xff\xff\x07", b"\xff\xff\xff\x7f", b"\x7f\xff"]
MAX_VALID = 1024  # bytes of the valid encoding whose every position is overwritten


@pytest.mark.parametrize("schema, version", targets.SCHEMAS[::3],
                         ids=[f"{s.name}-v{v}" for s, v in targets.SCHEMAS[::3]])
def test_huge_lengths_anywhere_cost_nothing(schema, version):
    """Every position of a valid encoding overwritten with a huge length (int32, uvarint, int16)."""
    rng = random.Random(f"{schema.name}{version}")
    valid = targets.encode(schema, version, rng)
    while len(valid) > MAX_VALID:  # each position costs a decode of the whole: keep the test's work linear-ish
        valid = targets.encode(schema, version, rng)
    decode = targets.decoder_for(schema, version)
    decode(valid, 0)  # compiled before measuring

    def run():
        for at in range(len(valid)):
            for huge in HUGE:
                body = valid[:at] + huge + valid[at + len(huge):]
                try:
                    decode(body, 0)
                except DecodeError:
                    pass

    assert peak(run) < 512 << 10


def test_array_of_2_31_elements_in_30_bytes():
    from kwire.codec.schemas import schema_for

    schema = schema_for(3, "request")  # Metadata: Topics is an array of structs
    body = b"\x7f\xff\xff\xff" + b"\x00" * 26
    targets.decoder_for(schema, 1)(b"\x00" * 4, 0)  # compiled before measuring

    def run():
        with pytest.raises(DecodeError):
            targets.decoder_for(schema, 1)(body, 0)

    assert peak(run) < 64 << 10


def _value_bomb(size: int) -> bytes:
    """A gzip batch whose one record holds a value of `size` zero bytes (compressed ~1000:1)."""
    return v2_batch([(b"k", b"\x00" * size)], codec=GZIP)


def test_decompression_is_bounded_per_exchange_not_per_batch():
    one = _value_bomb(1 << 20)
    assert len(one) < 4096
    buf = b"".join(_value_bomb(1 << 20) for _ in range(40))  # 40 MiB of values in ~100 KiB
    out = {}

    def run():
        out.update(decode_records(buf, RecordBudget(data=4 << 20)))

    used = peak(run)
    decoded = [batch for batch in out["batches"] if batch["Records"]]
    refused = [batch for batch in out["batches"] if not batch["Records"]]
    assert 2 <= len(decoded) <= 4 and len(refused) >= 36
    assert all("error" in batch for batch in refused)
    assert used < 24 << 20  # values kept as text are copies: ~2x the budget at most, plus slack


def test_records_are_bounded_per_exchange():
    batch = v2_batch([(None, b"v")] * 3000)
    budget = RecordBudget(entries=5000)
    out = decode_records(batch * 3, budget)
    counts = [len(x["Records"]) for x in out["batches"]]
    assert counts == [3000, 2000, 0]
    assert "error" in out["batches"][1] and "error" in out["batches"][2]
    assert "error" not in out["batches"][0]
    assert "5,000 records and headers" in out["budget"] and "2 batches cut" in out["budget"]
    assert decode_records(batch, budget)["batches"][0]["Records"] == []  # the next field of the exchange


def test_a_bomb_batch_spends_what_it_made():
    bomb = v2_batch(payload=gzip.compress(b"\x00" * (8 << 20)), codec=GZIP, record_count=1)
    good = v2_batch([(b"k", b"v")], codec=GZIP)
    plain = v2_batch([(b"k", b"v")], codec=NONE)
    budget = RecordBudget(data=1 << 20)
    out = decode_records(good + bomb + good + plain, budget)
    first, middle, last, stored = out["batches"]
    assert first["Records"] and not middle["Records"] and not last["Records"] and not stored["Records"]
    assert "exceeds the limit" in middle["error"] and "budget of this exchange used up" in last["error"]
    assert budget.data == 0 and budget.decompressed > 1 << 20
    assert "record data budget" in out["budget"] and "3 batches cut" in out["budget"]


def test_pcap_record_claiming_gigabytes_is_refused_without_reading_it():
    whole = b.pcap([(0, b"x" * 60)], snaplen=0xFFFFFFFF)
    bad = whole[:24 + 8] + struct.pack("<II", 0x7FFFFFF0, 0x7FFFFFF0) + whole[24 + 16:]

    def run():
        with pytest.raises(CaptureError, match="absurd record length"):
            list(open_capture(io.BytesIO(bad)))

    assert peak(run) < 4 << 20


def test_gzip_bomb_behind_a_huge_record_costs_at_most_max_record():
    """A record header claiming the largest allowed length, then a gzip bomb: kwire reads at most
    MAX_RECORD of it before finding the file ends (or the record is refused)."""
    head = b.pcap([], snaplen=0xFFFFFFFF) + struct.pack("<IIII", 0, 0, MAX_RECORD, MAX_RECORD)
    blob = gzip.compress(head + b"\x00" * (MAX_RECORD + (1 << 20)), 9)

    def run():
        sizes = [len(p.data) for p in open_capture(io.BytesIO(blob))]
        assert sizes[0] == MAX_RECORD and not any(sizes[1:])  # then the zeros read as empty records

    assert peak(run) < 3 * MAX_RECORD + (8 << 20)


def test_pcapng_block_claiming_gigabytes_is_refused():
    good = b.shb() + b.idb(1) + b.epb(0, 1, b"x" * 60)
    bad = good + struct.pack("<II", 6, 0x7FFFFFFC) + b"\x00" * 64

    def run():
        with pytest.raises(CaptureError, match="bad block length"):
            list(open_capture(io.BytesIO(bad)))

    assert peak(run) < 4 << 20


def test_framer_holds_only_what_arrived_of_a_huge_frame():
    framer = Framer(finder(lambda buf: -1), synced=True, max_frame=1 << 30)

    def run():
        framer.feed(struct.pack(">i", (1 << 30) - 1) + b"\x00" * 1000)

    assert peak(run) < 64 << 10
    assert len(framer.buf) == 1004 and framer.need == 4 + ((1 << 30) - 1) - 1004
