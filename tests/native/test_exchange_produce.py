"""kwire.native.exchange_produce: one read of a Produce gives what facts, observe and the row read
separately (batch keys, record counts, error codes, failed partitions), checked against kwire's
other readers of the same bytes (summarize_records, count_v2_records, kwire.query)."""

from __future__ import annotations

import glob
import random
import struct
from pathlib import Path

from kwire.native.exchange_facts import exchange_row, partition_rows, records_facts
from kwire.analytics.observe import observations
from kwire.native.exchange_produce import read_answer, scan_batches
from kwire.analytics.read import read_exchange
from kwire.analytics.resend_state import ResendState
from kwire.native.codec_budget import RecordBudget
from kwire.native.codec_records import count_records, count_v2_records, summarize_records
from kwire.native.exchange_enrich import Enricher, topic_label
from kwire.model import PAIRED, Exchange
from kwire.pipeline import analyze_files
from kwire.native.exchange_errors import response_error_codes
from tests.codec.test_records_encoder import control_batch, legacy_message, legacy_wrapper, v2_batch

ROOT = Path(__file__).parent.parent.parent
CAPTURES = sorted(p for p in glob.glob(str(ROOT / "captures" / "**" / "*.pcap*"), recursive=True)
                  + glob.glob(str(ROOT / "tests" / "**" / "data" / "*.pcap*"), recursive=True)
                  if ".truth." not in p and p.endswith((".pcap", ".pcapng", ".gz")))


def _records_field(rng: random.Random) -> bytes:
    parts = []
    for i in range(rng.randint(0, 8)):
        kind = rng.random()
        if kind < 0.4:
            idempotent = rng.random() < 0.5
            parts.append(v2_batch([(b"k", b"v")] * rng.randint(0, 4), base_offset=i, codec=rng.choice((0, 1)),
                                  producer_id=rng.randint(0, 9) if idempotent else -1, producer_epoch=rng.randint(0, 3),
                                  base_sequence=rng.randint(0, 99) if idempotent else -1,
                                  attributes=rng.choice((0, 0x10))))
        elif kind < 0.5:
            parts.append(control_batch(rng.randint(0, 1), 3, base_offset=i))
        elif kind < 0.7:
            parts.append(legacy_message(rng.randint(0, 1), i, b"k", b"v"))
        elif kind < 0.8:
            bad = bytearray(v2_batch([(b"k", b"v")] * 2, base_offset=i))
            bad[-1] ^= 0xFF  # a CRC failure: its header still says it all
            parts.append(bytes(bad))
        elif kind < 0.9:
            bad = bytearray(v2_batch([(b"k", b"v")], base_offset=i))
            bad[16] = rng.choice((3, 0x82))  # a magic kwire does not read
            parts.append(bytes(bad))
        else:
            parts.append(legacy_wrapper(1, i, legacy_message(1, 0, b"a", b"b"), 1))
    data = b"".join(parts)
    if rng.random() < 0.3:
        data = data[: rng.randint(0, len(data))]  # a cut tail
    if rng.random() < 0.1:
        data += bytes(rng.randrange(256) for _ in range(rng.randint(1, 40)))  # garbage after it
    return data


def _keys_from_summaries(data: bytes) -> list[tuple]:
    """(key, producer id, transactional) of the whole batches before the first one cut or unreadable,
    control batches left out, from summarize_records' listing."""
    out = []
    for batch in summarize_records(data, RecordBudget(batches=1 << 30))["batches"]:
        if batch.get("partial") or "error" in batch or batch.get("Magic") not in (0, 1, 2):
            break
        attributes = batch["Attributes"]
        if attributes.get("IsControl"):
            continue
        pid = batch.get("ProducerId", -1)
        if batch["Magic"] == 2 and pid >= 0 and batch["BaseSequence"] >= 0:
            key = ("pid", pid, batch["ProducerEpoch"], batch["BaseSequence"])
        else:
            key = ("crc", batch["Crc"], -1, -1)
        out.append((key, pid, bool(attributes.get("IsTransactional"))))
    return out


def test_scan_batches_agrees_with_the_other_readers():
    rng = random.Random(2727)
    for _ in range(400):
        data = _records_field(rng)
        batches, records = scan_batches(data)
        assert records == count_v2_records(data) if data else records == 0
        if records is None:
            records = count_records(data)
        assert (len(data), records) == records_facts(data)
        got = [(key, pid, transactional) for key, pid, transactional, _, _ in batches]
        assert got[: len(_keys_from_summaries(data))] == _keys_from_summaries(data)


def test_scan_batches_gives_every_header_field_as_the_struct_reads_it():
    """Compiled, a batch header's 13 fields are read in C (produce_read.pxd): the same numbers as the
    struct's, at every field's extremes (signs, the unsigned CRC, 64-bit offsets), in bytes and in views."""
    head = struct.Struct(">qiibIhiqqqhii")
    rng = random.Random(61)
    extremes = [(-(1 << 63), (1 << 63) - 1, -1, 0), (-(1 << 31), (1 << 31) - 1, -1, 0), (-128, 127, -1, 2),
                (0, (1 << 32) - 1, 1 << 31, 0), (-(1 << 15), (1 << 15) - 1, -1, 0), (-(1 << 31), (1 << 31) - 1, -1, 0)]
    kinds = [0, 1, 1, 2, 3, 4, 1, 0, 0, 0, 4, 1, 1]  # each field's kind in extremes
    for i in range(300):
        fields = [rng.choice(extremes[k]) if i % 2 else rng.randint(extremes[k][0], extremes[k][1]) for k in kinds]
        fields[1], fields[3] = 49, 2  # a v2 batch of no records: batchLength 49, magic 2
        fields[5] &= ~0x20  # not a control batch (those are left out)
        data = head.pack(*fields)
        for buf in (data, memoryview(b"xx" + data)[2:], bytearray(data)):
            batches, _ = scan_batches(buf)
            assert [b[4] for b in batches] == [tuple(fields)]


def _capture_exchanges():
    for path in CAPTURES:
        enricher = Enricher()
        for ex in analyze_files([path]):
            enricher.enrich(ex)
            yield ex


def test_read_answer_is_the_error_codes_and_the_failed_partitions():
    produces = 0
    for ex in _capture_exchanges():
        if ex.api != "Produce":
            continue
        produces += 1
        _check_answer(ex)
    assert produces > 1000
    made = Exchange(connection_id=1, client="c:1", broker="b:2", status=PAIRED, correlation_id=1, api_key=0,
                    api="Produce", api_version=9, request_ts_ns=1, response_ts_ns=2, request={"Acks": -1})
    answers = [{"Responses": [{"Name": "t", "PartitionResponses": [{"Index": 0, "ErrorCode": 6},
                                                                   {"Index": 1, "ErrorCode": 0},
                                                                   {"Index": 2, "ErrorCode": 19}]},
                              {"Name": "u", "PartitionResponses": [{"Index": 0, "ErrorCode": 6}]}]},
               {"Responses": [{"Name": "t", "PartitionResponses": [{"Index": 3, "ErrorCode": 7}]}]},
               {"Responses": [{"Name": "t", "PartitionResponses": []}], "ThrottleTimeMs": 0},
               {"_layout": "v0", "ErrorCode": 35}, {}, None]
    for version in (0, 3, 9, 13, 99, None):
        for response in answers:
            made.api_version, made.response = version, response
            _check_answer(made)


def _check_answer(ex: Exchange) -> None:
    codes, failed, bases = read_answer(ex)
    assert codes == response_error_codes(ex)
    written = []  # the partitions answered without error, with their BaseOffset: read here independently
    for topic in (ex.response or {}).get("Responses") or ():
        for part in topic.get("PartitionResponses") or ():
            if not part.get("ErrorCode") and isinstance(part.get("BaseOffset"), int) and part["BaseOffset"] >= 0:
                written.append((topic_label(topic), part.get("Index"), part["BaseOffset"]))
    assert bases == written
    expected = set()
    if codes:
        for topic in ex.response.get("Responses") or ():
            for part in topic.get("PartitionResponses") or ():
                if part.get("ErrorCode"):
                    expected.add((topic_label(topic), part.get("Index")))
    assert failed == expected


def test_read_exchange_is_the_separate_reads():
    """What stats, live and spark are fed, one read per exchange, is what the separate functions give
    (every exchange of every committed capture, a resend watch that reads every batch or none)."""
    for ex in _capture_exchanges():
        for watch in (None, _ReadAll()):
            row, parts, names, observed = read_exchange(ex, watch)
            assert row == exchange_row(ex)
            assert parts == partition_rows(ex)
            assert observed == observations(ex, watch)
        if ex.api == "Produce":  # the partition rows as records_facts counts each records field
            expected = [(topic_label(topic), part.get("Index")) + records_facts(part.get("Records"))
                        for topic in (ex.request or {}).get("TopicData") or ()
                        for part in topic.get("PartitionData") or ()]
            assert [(r["topic"], r["partition"], r["bytes"], r["records"]) for r in parts] == expected


class _ReadAll(ResendState):
    """A resend watch that wants every batch read (a ResendState: compiled, the watch is typed)."""

    def wants(self, *args, **kwargs) -> bool:
        return True
