"""One read of a Produce exchange's bodies, for every analysis that needs them.

Produce is most of many-small traffic, and three analyses read its partitions: the partition rows
(kwire.native.exchange_facts: bytes and records), the batches (kwire.analytics.observe: idempotence keys,
transactions, resends) and the answer (the row's error_codes; which partitions were answered with an
error). They read them here, once per exchange (kwire.analytics.read):

- `request_partitions(request)`: per partition of the request, in order, (topic label, partition
  index, records bytes or None, bytes, records, batches): bytes and records as
  kwire.native.exchange_facts.records_facts defines them, batches as `scan_batches` gives them.
- `scan_batches(data)`: (batches, records) of a records field in one walk of its batch headers:
  batches: per batch, control batches left out, (key, producer id, transactional, position, v2
  header fields or None), key ("pid", producer id, epoch, base sequence) or ("crc", crc, -1, -1)
  when the producer is not idempotent; records: the RecordCount of the non-control batches when the
  field is nothing but whole v2 batches (kwire.native.codec_records.count_v2_records), else None.
- `read_answer(ex)`: (codes, failed, bases): codes is kwire.native.exchange_errors.response_error_codes(ex), the same
  list; failed the (topic, partition) answered with a non-zero ErrorCode, an empty set when no code
  was found (the partitions' codes are looked at in the walk that finds the codes, not in another);
  bases: (topic label, partition index, BaseOffset) of each partition answered without error and
  with a BaseOffset >= 0, in the answer's order, read in that same walk (kwire.analytics.end_to_end:
  which offsets a Produce wrote).
"""

from __future__ import annotations

import struct

from kwire.native import c_reads
from kwire.native.codec_records import count_records
from kwire.codec.values import RawRecords
from kwire.native.exchange_enrich import topic_label
from kwire.model import Exchange
from kwire.native.exchange_errors import error_codes, error_tree, response_error_codes

_I32 = struct.Struct(">i")
_LEGACY_CRC = struct.Struct(">qiI")
_V2_MIN_LENGTH = 61 - 12  # kwire.native.codec_records.V2_MIN_BATCH_LENGTH
_CONTROL = 0x20
_TRANSACTIONAL = 0x10

PRODUCE_KEY = 0
# Where a Produce response keeps its ErrorCodes (kwire.native.exchange_errors.error_tree), in every version Kafka defines.
_ANSWER_TREE = (("Responses", (("PartitionResponses", (("ErrorCode", None),)),)),)
_SHAPED: dict = {}  # version -> is its error tree _ANSWER_TREE


def scan_batches(data) -> tuple[list[tuple], int | None]:
    keys = []
    view = memoryview(data)
    pos, end = 0, len(view)
    records = 0  # None once the field is more than whole v2 batches
    while pos + 17 <= end:
        if pos + 61 <= end:  # room for a v2 header: its fields read at once (size and magic among them)
            # the 13 fields at once (compiled, read in C: kwire/native/c_reads.pxd, not by the struct's format walk)
            head = c_reads._v2_head(view, pos)
            size, magic = head[1], head[3] & 0xFF
        else:
            head = None
            size, magic = _I32.unpack_from(view, pos + 8)[0], view[pos + 16]
            records = None
        if size < 0 or pos + 12 + size > end:
            records = None
            break
        if magic >= 2 and head is not None:
            attributes, pid, sequence = head[5], head[9], head[11]
            if magic != 2 or size < _V2_MIN_LENGTH:
                records = None
            if attributes & _CONTROL:  # control batch: commit or abort markers, written by brokers
                pass
            else:
                if records is not None:
                    records += head[12]
                if pid >= 0 and sequence >= 0:
                    keys.append((("pid", pid, head[10], sequence), pid, bool(attributes & _TRANSACTIONAL), pos, head))
                else:
                    keys.append((("crc", head[4], -1, -1), pid, bool(attributes & _TRANSACTIONAL), pos, head))
        else:
            records = None
            if magic < 2:
                keys.append((("crc", _LEGACY_CRC.unpack_from(view, pos)[2], -1, -1), -1, False, pos, None))
        pos += 12 + size
    if pos != end:
        records = None
    return keys, records


def request_partitions(request: dict | None) -> list[tuple]:
    out = []
    if not request:
        return out
    for topic in request.get("TopicData") or ():
        label = topic_label(topic)
        for part in topic.get("PartitionData") or ():
            records = part.get("Records")
            data = records.data if type(records) is RawRecords else records
            if data is None:
                out.append((label, part.get("Index"), None, 0, 0, ()))
                continue
            size = len(data)
            if not size:
                out.append((label, part.get("Index"), data, 0, 0, ()))
                continue
            batches, count = scan_batches(data)
            if count is None:  # a legacy message, a batch cut at the end, garbage: walked, nothing kept per batch
                count = count_records(data)
            out.append((label, part.get("Index"), data, size, count, batches))
    return out


def _shaped(version) -> bool:
    shaped = _SHAPED.get(version)
    if shaped is None:
        shaped = error_tree(PRODUCE_KEY, version) == _ANSWER_TREE
        if len(_SHAPED) < 256:  # versions come off the wire: bounded
            _SHAPED[version] = shaped
    return shaped


def read_answer(ex: Exchange) -> tuple[list[int], set, list]:
    response = ex.response
    if not response:
        return [], set(), []
    if "_layout" in response or not _shaped(ex.api_version):
        codes = response_error_codes(ex)
        return codes, (failures(response) if codes else set()), answer_bases(response)
    found: list[int] = []
    bases: list = []
    failed = None
    topics = response.get("Responses")
    if type(topics) is list:
        for item in topics:
            if type(item) is not dict:
                continue
            topic = item  # a dict (compiled, its look-ups C calls: produce_read.pxd)
            parts = topic.get("PartitionResponses")
            if type(parts) is not list:
                continue
            label = None
            for entry in parts:
                if type(entry) is dict:
                    part = entry
                    code = part.get("ErrorCode")
                    if code:
                        if type(code) is int:
                            found.append(code)
                        if failed is None:
                            failed = set()
                        failed.add((topic_label(topic), part.get("Index")))
                    else:
                        base = part.get("BaseOffset")
                        if type(base) is int and base >= 0:
                            if label is None:
                                label = topic_label(topic)
                            bases.append((label, part.get("Index"), base))
    if not found:
        return found, set(), bases
    if len(found) > 1:  # kwire.native.exchange_errors.response_error_codes: the body's order, from the walk of every value
        found = error_codes(response)
    return found, failed, bases


def answer_bases(response) -> list:
    """(topic label, partition, BaseOffset) of a Produce response's partitions answered without error."""
    out = []
    for topic in (response or {}).get("Responses") or ():
        if type(topic) is not dict:
            continue
        for part in topic.get("PartitionResponses") or ():
            if type(part) is dict and not part.get("ErrorCode"):
                base = part.get("BaseOffset")
                if type(base) is int and base >= 0:
                    out.append((topic_label(topic), part.get("Index"), base))
    return out


def failures(response) -> set:
    """The (topic, partition) a Produce response answered with a non-zero ErrorCode."""
    failed = set()
    for topic in (response or {}).get("Responses") or ():
        label = topic_label(topic)
        for part in topic.get("PartitionResponses") or ():
            if part.get("ErrorCode"):
                failed.add((label, part.get("Index")))
    return failed
