"""The records inside a v2 RecordBatch (magic 2), after the 61-byte batch header and any decompression.

Owns: `decode_v2_records`, which turns the record bytes of one batch into a list of plain dicts, and
`text_or_hex`, the one rule for showing keys, values and header fields (str when valid UTF-8, else
{"hex": ...}, None for null). Each record is read inside its own declared length, so a bad record
never reads into the next one; a malformed record stops the batch with an error string, keeping the
records already read. Control records (transaction markers, KRaft records) also get a "Control" entry.
"""

from __future__ import annotations

import struct

from kwire.codec.primitives import read_varint, read_varlong
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
    if raw is None:
        return None
    data = bytes(raw)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return {"hex": data.hex()}


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


def _bytes_field(rec, pos: int, what: str):
    """A varint-length-prefixed nullable byte field inside one record: (memoryview or None, new pos)."""
    b = rec[pos] if pos < len(rec) else 0x80
    if b < 0x80:
        n = (b >> 1) ^ -(b & 1)
        pos += 1
    else:
        n, pos = read_varint(rec, pos)
    if n < 0:
        if n == -1:
            return None, pos
        raise DecodeError(f"{what} length {n}", pos)
    end = pos + n
    if end > len(rec):
        raise DecodeError(f"{what} of {n} bytes overruns the record", pos)
    return rec[pos:end], end


def decode_v2_records(
    data,
    count: int,
    base_offset: int,
    base_timestamp: int,
    log_append_time: int | None,
    is_control: bool,
) -> tuple[list[dict], str | None]:
    """Decode `count` records from `data` (the batch's bytes after its header, decompressed).

    `log_append_time` is the batch MaxTimestamp when its timestamp type is LogAppendTime (then every
    record's Timestamp is that), else None. Returns (records, error or None).
    """
    mv = data if isinstance(data, memoryview) else memoryview(data)
    end = len(mv)
    records: list[dict] = []
    if count < 0:
        return records, f"negative record count {count}"
    pos = 0
    i = 0
    try:
        for i in range(count):
            if pos >= end:
                raise DecodeError("no bytes left for the record", pos)
            b = mv[pos]
            if b < 0x80:
                length = (b >> 1) ^ -(b & 1)
                pos += 1
            else:
                length, pos = read_varint(mv, pos)
            if length < MIN_RECORD_BYTES - 1 or pos + length > end:
                raise DecodeError(f"record length {length} with {end - pos} bytes left", pos)
            rec = mv[pos : pos + length]
            start = pos
            pos += length

            attributes = rec[0]
            b = rec[1]
            if b < 0x80:
                ts_delta = (b >> 1) ^ -(b & 1)
                p = 2
            else:
                ts_delta, p = read_varlong(rec, 1)
            b = rec[p] if p < length else 0x80
            if b < 0x80:
                off_delta = (b >> 1) ^ -(b & 1)
                p += 1
            else:
                off_delta, p = read_varint(rec, p)
            key, p = _bytes_field(rec, p, "key")
            value, p = _bytes_field(rec, p, "value")
            b = rec[p] if p < length else 0x80
            if b < 0x80:
                n_headers = (b >> 1) ^ -(b & 1)
                p += 1
            else:
                n_headers, p = read_varint(rec, p)
            if n_headers < 0 or n_headers > (length - p) // 2:
                raise DecodeError(f"header count {n_headers} with {length - p} bytes left", start + p)
            headers = []
            for _ in range(n_headers):
                hkey, p = _bytes_field(rec, p, "header key")
                hvalue, p = _bytes_field(rec, p, "header value")
                headers.append({"Key": text_or_hex(hkey), "Value": text_or_hex(hvalue)})
            if p != length:
                raise DecodeError(f"record declares {length} bytes but its fields take {p}", start)
            record = {
                "Offset": base_offset + off_delta,
                "Timestamp": log_append_time if log_append_time is not None else base_timestamp + ts_delta,
                "Key": text_or_hex(key),
                "Value": text_or_hex(value),
                "Headers": headers,
                "Attributes": attributes - 256 if attributes > 127 else attributes,
                "OffsetDelta": off_delta,
                "TimestampDelta": ts_delta,
            }
            if is_control:
                record["Control"] = control_marker(key, value)
            records.append(record)
    except DecodeError as e:
        return records, f"record {i}: {e}"
    except IndexError:  # a field cut by the record's own length (reading rec[p] past its end)
        return records, f"record {i}: record is shorter than its fields"
    if pos != end:
        return records, f"{end - pos} bytes left after {count} records"
    return records, None
