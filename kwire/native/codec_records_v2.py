"""The records inside a v2 RecordBatch (magic 2), after the 61-byte batch header and any decompression.

Owns: `decode_v2_records`, which turns the record bytes of one batch into a list of plain dicts, and
`text_or_hex`, the one rule for showing keys, values and header fields (str when valid UTF-8, else
{"hex": ...}, None for null). Each record is read inside its own declared length, so a bad record
never reads into the next one; a malformed record stops the batch with an error string, keeping the
records already read. Control records (transaction markers, KRaft records) also get a "Control" entry.
"""

from __future__ import annotations

import struct

from kwire.kafka.primitives import read_varint, read_varlong
from kwire.errors import DecodeError

CONTROL_TYPES = {
    0: "ABORT",
    1: "COMMIT",
    2: "LEADER_CHANGE",
    3: "SNAPSHOT_HEADER",
    4: "SNAPSHOT_FOOTER",
    5: "KRAFT_VERSION",
    6: "KRAFT_VOTERS",
}
_CONTROL_KEY = struct.Struct(">hh")  # version, type
_END_TXN_MARKER = struct.Struct(">hi")  # version, coordinator epoch

MIN_RECORD_BYTES = 7  # length, attributes, timestamp delta, offset delta, key, value, header count


def text_or_hex(raw):
    """A key, value or header field as shown: str if valid UTF-8, else {"hex": "..."}; None stays None."""
    return None if raw is None else _text(bytes(raw))


def control_marker(key, value) -> dict:
    """The meaning of a control record: {"ControlType": ..., "CoordinatorEpoch": ...} for markers."""
    if key is None or len(key) < 4:
        return {"ControlType": "UNKNOWN", "error": "control record key shorter than 4 bytes"}
    version, kind = _CONTROL_KEY.unpack_from(key, 0)
    marker: dict = {"ControlType": CONTROL_TYPES.get(kind, f"UNKNOWN({kind})"), "Version": version}
    if kind in (0, 1):
        if value is not None and len(value) >= 6:
            marker["CoordinatorEpoch"] = _END_TXN_MARKER.unpack_from(value, 0)[1]
        else:
            marker["error"] = "transaction marker value shorter than 6 bytes"
    return marker


def _zigzag(buf: bytes, pos: int) -> tuple[int, int]:
    """A zigzag varint (32-bit) at pos: one- and two-byte forms inline, longer ones via the primitives."""
    b = buf[pos]
    if b < 0x80:
        return (b >> 1) ^ -(b & 1), pos + 1
    b2 = buf[pos + 1]
    if b2 < 0x80:
        raw = (b & 0x7F) | (b2 << 7)
        return (raw >> 1) ^ -(raw & 1), pos + 2
    return read_varint(buf, pos)


def _zigzag64(buf: bytes, pos: int) -> tuple[int, int]:
    """A zigzag varlong (64-bit: the timestamp delta) at pos."""
    b = buf[pos]
    if b < 0x80:
        return (b >> 1) ^ -(b & 1), pos + 1
    return read_varlong(buf, pos)


def _text(raw: bytes):
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return {"hex": raw.hex()}


def _field(buf: bytes, p: int, rec_end: int, what: str):
    """A record's key, value, header key or header value: (bytes or None for -1, position after it)."""
    n, p = _zigzag(buf, p)
    if n >= 0:
        q = p + n
        if q > rec_end:
            raise DecodeError(f"{what} of {n} bytes overruns the record", p)
        return buf[p:q], q
    if n == -1:
        return None, p
    raise DecodeError(f"{what} length {n}", p)


def decode_v2_records(
    data,
    count: int,
    base_offset: int,
    base_timestamp: int,
    log_append_time: int | None,
    is_control: bool,
    max_entries: int | None = None,
) -> tuple[list[dict], str | None, int, bool]:
    """Decode `count` records from `data` (the batch's bytes after its header, decompressed).

    `log_append_time` is the batch MaxTimestamp when its timestamp type is LogAppendTime (then every
    record's Timestamp is that), else None. At most `max_entries` records and record headers are
    made (each record counts 1, each of its headers 1): a record that would pass the limit is not
    decoded, and the error says the budget stopped the batch. Returns (records, error or None,
    entries made, whether the budget stopped the batch). Works on `data` itself when it is bytes or a bytearray (a decompressed payload),
    else on one bytes copy; every length is checked against the end of its record before it is used.
    """
    buf = data if type(data) is bytes or type(data) is bytearray else bytes(data)
    if count < 0:
        return [], f"negative record count {count}", 0, False
    left = count + 1 if max_entries is None else max_entries
    records, pos, made, error = _read_records(buf, count, base_offset, base_timestamp, log_append_time,
                                              is_control, left)
    stopped = False
    if error is None:
        if len(records) < count and pos < len(buf):
            stopped = True
            error = (f"{ENTRY_BUDGET_CUT} after {len(records)} of {count} records: the rest are not shown")
        elif pos != len(buf):
            error = f"{len(buf) - pos} bytes left after {count} records"
    return records, error, made, stopped


ENTRY_BUDGET_CUT = "record budget used up"


def _read_records(buf, count: int, base_offset: int, base_timestamp: int, log_append_time: int | None,
                  is_control: bool, left: int) -> tuple[list[dict], int, int, str | None]:
    """Records one after another until `count`, an error, or `left` entries are made:
    (records, position after the last one, entries made, error or None)."""
    end = len(buf)
    records: list[dict] = []
    append = records.append
    zigzag = _zigzag
    text = _text
    pos = i = made = 0
    try:
        for i in range(count):
            if pos >= end:
                raise DecodeError("no bytes left for the record", pos)
            b = buf[pos]
            if b < 0x80:
                length = (b >> 1) ^ -(b & 1)
                p = pos + 1
            else:
                length, p = zigzag(buf, pos)
            rec_end = p + length
            if length < MIN_RECORD_BYTES - 1 or rec_end > end:
                raise DecodeError(f"record length {length} with {end - p} bytes left", pos)
            attributes = buf[p]
            b = buf[p + 1]
            if b < 0x80:
                ts_delta = (b >> 1) ^ -(b & 1)
                p += 2
            else:
                ts_delta, p = _zigzag64(buf, p + 1)
            b = buf[p]
            if b < 0x80:
                off_delta = (b >> 1) ^ -(b & 1)
                p += 1
            else:
                off_delta, p = zigzag(buf, p)
            key, p = _field(buf, p, rec_end, "key")
            value, p = _field(buf, p, rec_end, "value")
            n_headers, p = zigzag(buf, p)
            if n_headers:
                if n_headers < 0 or n_headers > (rec_end - p) // 2:
                    raise DecodeError(f"header count {n_headers} with {rec_end - p} bytes left", p)
                if made + 1 + n_headers > left:
                    break  # the budget: decode_v2_records says so
                headers, p = _headers(buf, p, rec_end, n_headers)
                made += n_headers
            elif made >= left:
                break
            else:
                headers = []
            if p != rec_end:
                raise DecodeError(f"record declares {length} bytes but its fields take {p - rec_end + length}",
                                  pos)
            record = {
                "Offset": base_offset + off_delta,
                "Timestamp": log_append_time if log_append_time is not None else base_timestamp + ts_delta,
                "Key": None if key is None else text(key),
                "Value": None if value is None else text(value),
                "Headers": headers,
                "Attributes": attributes - 256 if attributes > 127 else attributes,
                "OffsetDelta": off_delta,
                "TimestampDelta": ts_delta,
            }
            if is_control:
                record["Control"] = control_marker(key, value)
            append(record)
            made += 1
            pos = rec_end
    except DecodeError as e:
        return records, pos, made, f"record {i}: {e}"
    except IndexError:  # a varint running past the end of the bytes
        return records, pos, made, f"record {i}: record is cut short (a field runs past the end)"
    return records, pos, made, None


def _headers(buf, p: int, rec_end: int, n: int) -> tuple[list[dict], int]:
    """A record's `n` headers from p (n checked against the bytes left): ([{"Key", "Value"}, ...],
    position after them)."""
    headers = []
    for _ in range(n):
        hkey, p = _field(buf, p, rec_end, "header key")
        hvalue, p = _field(buf, p, rec_end, "header value")
        headers.append({"Key": None if hkey is None else _text(hkey),
                        "Value": None if hvalue is None else _text(hvalue)})
    return headers, p
