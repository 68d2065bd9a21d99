"""Fuzz targets: one function per attack surface, each taking bytes and checking that nothing escapes
but kwire's own errors, turned into data.

Shared by the hypothesis tests (tests/fuzz/test_*.py), the corpus replay (tests/fuzz/test_corpus.py,
inputs under tests/fuzz/corpus/<target>/ that once failed) and the atheris harnesses
(scripts/fuzz_*.py). A target raises AssertionError (or lets an unexpected exception through) when
kwire misbehaves; any return is a pass.

Targets and what they check:
- framing:    Framer over the bytes cut into pieces (cut points from the first bytes), synced and
              unsynced: frames never outgrow the input, buffers stay bounded.
- decoders:   every (api, kind, version) decoder on the bytes, and on a valid random encoding of that
              message mutated by the bytes: DecodeError only; decoded bodies render as JSON.
- records:    summarize_records / decode_records (bounded decompression): never raise, JSON-ready.
- reassembly: the bytes read as a sequence of TCP segments (ports, flags, seq, ack, payload) into a
              FlowTable with a small buffer limit: no exception, out-of-order buffers bounded.
- capture:    the bytes as a capture file (and gzipped): CaptureError only, every packet well-formed.
- pipeline:   the bytes as Kafka traffic (both directions, segmented) through the whole pipeline
              and the JSON renderer: no exception.
- headers:    request/response header parsers and the resync searches: DecodeError / -1 only.
- tls_detect: the bytes as one direction of a connection captured mid-stream, cut into deliveries,
              through the TLS detector (issue 25): every byte handed on once, in order, whatever the
              verdict; the candidate-header search covers each byte a bounded number of times; bytes
              that start with whole plaintext Kafka request frames, or with bytes that chain as TLS
              records and then such frames, are never taken for TLS.
- keylog:     the bytes as key log text, whole and in slices: the same secrets and counters, never
              an exception, every line counted.
- times:      the bytes as a --since/--until value: a When or ValueError, never another exception, and
              a time that fits 64-bit nanoseconds.
- caps:       the bytes as keys added to capped tables (kwire.native.caps) split two ways and merged:
              the same table as one fed everything, never more rows than the cap and the folded one.

Each target returns its observation: what kwire made of the bytes (frames, decoded bodies as JSON, packets,
verdicts, documents), plain data. `observe(name, data)` turns it, or the exception that escaped, into one line
of text, so scripts/fuzz_builds.py and tests/fuzz/test_builds.py can run the same inputs on the compiled build
and on the pure-Python reference (KWIRE_PURE=1) and compare (issue 49): any difference is a bug of the compiled
one.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import random
import struct
import sys

try:
    import orjson
except ImportError:  # pragma: no cover - a dependency
    orjson = None

from kwire.capture.files import open_capture
from kwire.native.codec_budget import RecordBudget
from kwire.codec.compiler import decoder_for
from kwire.native.codec_records import count_v2_records, decode_records, summarize_records
from kwire.codec.schema import Field, MessageSchema
from kwire.codec.schemas import all_schemas
from kwire.errors import CaptureError, DecodeError
from kwire.native.framing import CutFrame, Framer
from kwire.native.kafka_headers import parse_request_header, parse_response_header, plausible_request
from kwire.native.kafka_resync import KEEP_TAIL, find_response_start
from kwire.net.segment import Segment
from kwire.render.jsonl import exchange_json
from kwire.render.records_json import summary_fragment
from kwire.render.values import plain_body
from tests.codec.test_records_encoder import uvarint
from tests.kafka.frames import find_request_start, finder

MAX_FRAME = 1 << 16
SCHEMAS: list[tuple[MessageSchema, int]] = sorted(
    ((schema, v) for schema in all_schemas().values() for v in range(0, 20) if v in schema.valid),
    key=lambda sv: (sv[0].api_key, sv[0].kind, sv[1]))


def _json(value) -> str:
    return json.dumps(value, allow_nan=True, sort_keys=True, default=repr)


def _digest(data: bytes) -> str:
    return hashlib.sha1(data).hexdigest()[:16]


# ---- framing ----------------------------------------------------------------------------------------


def framing(data: bytes):
    if len(data) < 2:
        return None
    synced = bool(data[0] & 1)
    step = 1 + data[1] % 97
    framer = Framer(finder(lambda buf: find_request_start(buf, MAX_FRAME)), synced=synced, max_frame=MAX_FRAME)
    stream = data[2:]
    got = 0
    lost = 0
    seen: list = []
    for i in range(0, len(stream), step):
        for frame in framer.feed(stream[i:i + step]):
            got += len(frame) + 4
            seen.append(_digest(bytes(frame)))
        assert len(framer.buf) <= MAX_FRAME + 4 + step
        if not framer.synced:
            assert len(framer.buf) <= max(KEEP_TAIL, step) + 4
        if i % 7 == 3:
            framer.gap()
        elif i % 5 == 2:  # bytes lost, their number known: frames of known length are followed through
            size = stream[i] % 200 if i < len(stream) else 1
            lost += size
            for frame in framer.gap(size):
                assert isinstance(frame, CutFrame) and len(frame) + 4 < frame.size <= MAX_FRAME + 4
                got += len(frame) + 4
                seen.append(("cut", frame.size, _digest(bytes(frame))))
            assert framer.need >= 0 and (framer.cut is None or framer.need > 0)
    assert got <= len(stream) + lost
    return seen, len(framer.buf), framer.synced


# ---- decoders ---------------------------------------------------------------------------------------


class Encoder:
    """A valid random encoding of one (schema, version): the decoders' input as Kafka would write it."""

    FIXED = {"bool": "?", "int8": "b", "int16": "h", "uint16": "H", "int32": "i", "uint32": "I",
             "int64": "q", "float64": "d"}

    def __init__(self, version: int, flexible: bool, rng: random.Random, depth: int = 0):
        self.v = version
        self.flexible = flexible
        self.rng = rng

    def length(self, n: int | None, wide: bool = False) -> bytes:
        if self.flexible:
            return uvarint(0 if n is None else n + 1)
        return struct.pack(">i" if wide else ">h", -1 if n is None else n)

    def value(self, f: Field, elem: str, nullable: bool) -> bytes:
        rng = self.rng
        if f.is_struct and elem == f.element_type and f.fields is not None and not f.is_array:
            if nullable and rng.random() < 0.2:
                return b"\xff"
            return (b"\x01" if nullable else b"") + self.struct(f.fields)
        if elem in self.FIXED:
            code = self.FIXED[elem]
            if code == "?":
                return bytes([rng.random() < 0.5])
            if code == "d":
                return struct.pack(">d", rng.random() * 1e6)
            size = struct.calcsize(code)
            signed = code.islower()
            lo, hi = (-(1 << (8 * size - 1)), (1 << (8 * size - 1)) - 1) if signed else (0, (1 << (8 * size)) - 1)
            n = rng.choice((0, 1, -1 if signed else 2, lo, hi, rng.randint(lo, hi)))
            return struct.pack(">" + code, n)
        if elem == "uuid":
            return rng.randbytes(16)
        if elem == "string":
            if nullable and rng.random() < 0.2:
                return self.length(None)
            text = "".join(rng.choice("abcé-_.0123") for _ in range(rng.randrange(12))).encode()
            return self.length(len(text)) + text
        if elem in ("bytes", "records"):
            if nullable and rng.random() < 0.2:
                return self.length(None, wide=True)
            raw = rng.randbytes(rng.randrange(40)) if elem == "bytes" else _random_batches(rng)
            return self.length(len(raw), wide=True) + raw
        raise AssertionError(f"unknown type {elem}")

    def field(self, f: Field) -> bytes:
        nullable = f.nullable_in(self.v)
        if f.is_array:
            if nullable and self.rng.random() < 0.2:
                return self.length(None, wide=True)
            n = self.rng.choice((0, 1, 1, 2, 3))
            out = [self.length(n, wide=True)]
            for _ in range(n):
                if f.is_struct:
                    out.append(self.struct(f.fields or ()))
                else:
                    out.append(self.value(f, f.element_type, False))
            return b"".join(out)
        return self.value(f, f.type, nullable)

    def struct(self, fields) -> bytes:
        out = []
        tagged = []
        for f in fields:
            if not f.present_in(self.v):
                continue
            if self.flexible and f.tagged_in(self.v):
                if self.rng.random() < 0.5:
                    tagged.append((f.tag, self.field(f)))
                continue
            out.append(self.field(f))
        if self.flexible:
            if self.rng.random() < 0.2:
                tagged.append((9999, self.rng.randbytes(3)))  # a tag this kwire does not know
            tagged.sort(key=lambda t: t[0])
            out.append(uvarint(len(tagged)))
            for tag, raw in tagged:
                out.append(uvarint(tag) + uvarint(len(raw)) + raw)
        return b"".join(out)


def encode(schema: MessageSchema, version: int, rng: random.Random) -> bytes:
    return Encoder(version, schema.is_flexible(version), rng).struct(schema.fields)


def _random_batches(rng: random.Random) -> bytes:
    """0-2 record batches v2 (valid headers, random or empty records) or garbage."""
    out = []
    for _ in range(rng.randrange(3)):
        records = rng.randbytes(rng.randrange(30))
        attributes = rng.choice((0, 0, 1, 2, 3, 4, 0x10, 0x20))
        body = struct.pack(">ihiqqqhii", 0, attributes, 0, 0, 0, -1, -1, -1, rng.randrange(4)) + records
        out.append(struct.pack(">qi", rng.randrange(1000), len(body) + 5) + struct.pack(">ib", 0, 2)
                   + struct.pack(">I", 0) + body)
    if rng.random() < 0.1:
        out.append(rng.randbytes(rng.randrange(20)))
    return b"".join(out)


def mutate(data: bytes, rng: random.Random, edits: int = 3) -> bytes:
    buf = bytearray(data)
    for _ in range(edits):
        op = rng.randrange(6)
        pos = rng.randrange(len(buf) + 1)
        if op == 0 and buf:
            buf[min(pos, len(buf) - 1)] ^= 1 << rng.randrange(8)
        elif op == 1 and buf:
            buf[min(pos, len(buf) - 1)] = rng.choice((0, 0x7F, 0x80, 0xFF))
        elif op == 2:
            del buf[pos:]
        elif op == 3:
            buf[pos:pos] = rng.randbytes(rng.randrange(1, 9))
        elif op == 4:
            buf[pos:pos + 4] = rng.choice((b"\x7f\xff\xff\xff", b"\xff\xff\xff\xff", b"\xff\xff\xff\x7f"))
        elif op == 5 and len(buf) > 2:
            a = rng.randrange(len(buf))
            del buf[a:a + rng.randrange(1, 5)]
    return bytes(buf)


def decode_one(schema: MessageSchema, version: int, body: bytes):
    try:
        decoded, end = decoder_for(schema, version)(body, 0)
    except DecodeError as exc:
        return "DecodeError", str(exc)
    assert 0 <= end <= len(body)
    return end, [_json(plain_body(decoded, records=records)) for records in ("summary", "full", "none")]


def decoders(data: bytes):
    if len(data) < 3:
        return None
    schema, version = SCHEMAS[int.from_bytes(data[:2], "big") % len(SCHEMAS)]
    mode = data[2] % 3
    rest = data[3:]
    if mode == 0:
        return decode_one(schema, version, rest)
    rng = random.Random(rest)
    valid = encode(schema, version, rng)
    whole = None
    if mode == 1:
        decoded, end = decoder_for(schema, version)(valid, 0)  # a valid encoding must decode whole
        assert end == len(valid), (schema.name, version, end, len(valid))
        whole = _json(plain_body(decoded))
    return whole, decode_one(schema, version, mutate(valid, rng, 1 + len(rest) % 4))


# ---- records ----------------------------------------------------------------------------------------


def records(data: bytes):
    from kwire.native.exchange_produce import scan_batches

    seen = []
    for buf in (data, _random_batches(random.Random(data)) + data[:64], _random_batches(random.Random(data))):
        batches, count = scan_batches(buf)  # the stats' walk of batch headers (read in C when compiled)
        assert count == count_v2_records(buf) if buf else count == 0
        summary = summarize_records(buf)
        full = decode_records(buf, RecordBudget(data=1 << 20, entries=5000, batches=64))
        seen.append((repr(batches), count, _json(summary), _json(full)))
        assert summary["size"] == len(buf) and full["size"] == len(buf)
        _same_summary_text(buf, summary)
    return seen


def _same_summary_text(buf: bytes, summary: dict) -> None:
    """kwire.render.records_json's text of the field, when it makes one, is orjson's of its summary."""
    if orjson is None:
        return
    fragment = summary_fragment(buf, RecordBudget(batches=3))
    if fragment is not None:
        assert orjson.dumps(fragment) == orjson.dumps(summarize_records(buf, RecordBudget(batches=3)))


# ---- reassembly -------------------------------------------------------------------------------------

_SEG = struct.Struct(">BBBIIB")  # endpoint pair, flags, truncated/payload size, seq, ack, ts step
_ENDS = [(b"\x0a\x00\x00\x01", 40000), (b"\x0a\x00\x00\x02", 9092), (b"\x0a\x00\x00\x01", 40001)]


def segments(data: bytes) -> list[Segment]:
    out = []
    pos = 0
    ts = 0
    while pos + _SEG.size <= len(data):
        pair, flags, size, seq, ack, step = _SEG.unpack_from(data, pos)
        pos += _SEG.size
        n = size & 0x7F
        payload = data[pos:pos + n]
        pos += n
        src = _ENDS[pair % 3]
        dst = _ENDS[(pair // 3) % 3]
        ts += step
        # seq near a few bases: reassembly paths need overlaps and holes, not 2**32 random numbers
        base = (1000, 5000, 0xFFFFFF00)[(pair >> 4) % 3]
        out.append(Segment(ts, src[0], src[1], dst[0], dst[1], (base + seq % 3000) & 0xFFFFFFFF,
                           (1000 + ack % 6000) & 0xFFFFFFFF, flags & 0x3F, payload, bool(size & 0x80)))
    return out


def _streams(events) -> dict:
    """Per (connection id, direction): the delivered bytes with gaps marked, as one bytes object."""
    out: dict = {}
    for event in events:
        key = (event.conn.id, getattr(event, "direction", None))
        if hasattr(event, "data"):
            data = event.data
            out[key] = out.get(key, b"") + (b"".join(data) if type(data) is tuple else bytes(data))
        elif hasattr(event, "size"):
            out[key] = out.get(key, b"") + b"<gap %d>" % event.size
    return out


def reassembly(data: bytes):
    """Segments into two flow tables, one whose consumers ask TCP to hold bytes back (changing
    wants), one not: no exception, bounded buffers, and the wants never change what is delivered."""
    from tests.tcp.build import EventTable

    limit = 256
    plain = EventTable(max_buffer_per_direction=limit, idle_timeout_ns=500, max_connections=2, linger_ns=100)
    hinted = EventTable(max_buffer_per_direction=limit, idle_timeout_ns=500, max_connections=2, linger_ns=100)
    a: list = []
    b: list = []
    for i, seg in enumerate(segments(data)):
        a += plain.feed(seg)
        b += hinted.feed(seg)
        if i % 3 == 2:
            want = (data[i % len(data)] * 3) if i % 2 else 0
            for flow in hinted._flows.values():
                hinted.want(flow.conn, i % 2, want)  # the consumer's answer, any value, any time
        for table in (plain, hinted):
            for flow in table._flows.values():
                for h in flow.halves:
                    assert h.buffered <= limit + 127
    a += plain.flush(1 << 40)
    b += hinted.flush(1 << 40)
    for event in a + b:
        if hasattr(event, "data"):
            assert len(event.data) > 0
        if hasattr(event, "size"):
            assert event.size > 0
    assert len(plain) == 0 and len(hinted) == 0
    streams = _streams(a)
    assert streams == _streams(b)
    assert plain.counters() == hinted.counters()
    return sorted((repr(k), _digest(v)) for k, v in streams.items()), _json(plain.counters())


# ---- capture readers ----------------------------------------------------------------------------------


def _read_all(blob: bytes) -> tuple[list, str | None]:
    packets: list = []
    try:
        with open_capture(io.BytesIO(blob)) as reader:
            for packet in reader:
                assert isinstance(packet.data, bytes) and packet.wire_len >= 0
                packets.append((packet.ts_ns, packet.linktype, packet.data, packet.wire_len))
    except CaptureError as exc:
        return packets, str(exc)
    return packets, None


def capture(data: bytes):
    """The bytes as a capture file: CaptureError only. With the first byte's low bit set, the rest is
    also gzipped, and gzipped with a broken CRC: the broken one must give every packet the good one
    gives (the damage is at the very end), then its error."""
    packets, plain_error = _read_all(data)
    assert sum(len(p[2]) for p in packets) <= len(data)
    if data[:1] and data[0] & 1:
        blob = gzip.compress(data[1:], 1)
        good, good_error = _read_all(blob)
        assert good == _read_all(data[1:])[0]
        broken, error = _read_all(blob[:-8] + bytes(x ^ 0xFF for x in blob[-8:-4]) + blob[-4:])
        if good_error is None:
            assert broken == good, (len(broken), len(good))
            assert error is not None
    return [(ts, link, _digest(raw), wire) for ts, link, raw, wire in packets], plain_error


# ---- whole pipeline -----------------------------------------------------------------------------------


def pipeline(data: bytes):
    """Bytes as a Kafka conversation: a byte of flags (handshake, port hint), then 2-byte heads say which side
    sends how many of the next bytes. Each exchange is written as JSON and added to the stats, whose document
    is written too. (The flags byte was also read as the first head until issue 49's comparison of the builds
    found that the seeds and the hypothesis test reached no exchange.)"""
    from kwire.analytics import Aggregator
    from kwire.pipeline import analyze_files
    from tests.fuzz.conversation import conversation_pcap

    messages = []
    pos = 1  # data[0]: the flags below (the seeds and tests/fuzz/test_targets.py write it first)
    while pos + 2 <= len(data):
        head = data[pos]
        n = data[pos + 1] * (8 if head & 2 else 1)
        messages.append((head & 1, data[pos + 2:pos + 2 + n]))
        pos += 2 + n
    handshake = not (data[:1] and data[0] & 4)
    mss = 1 + (data[-1] if data else 0) * 8 if data[-1:] and data[-1] & 1 else 1448
    blob = conversation_pcap([(d, m) for d, m in messages if m], handshake=handshake, mss=mss)
    stream = io.BytesIO(blob)
    stats = Aggregator()  # the analytics too: rows, partition rows, batch headers read in C, observations
    lines = []
    try:
        for ex in analyze_files([stream], port_hints=(9092,) if data[:1] and data[0] & 8 else ()):
            lines.append((exchange_json(ex), exchange_json(ex, records="full")))
            stats.add_exchange(ex)
    except CaptureError:
        raise AssertionError("a well-formed capture raised CaptureError") from None
    return lines, _json(stats.document())


# ---- headers and resync ---------------------------------------------------------------------------------


def _fields(obj) -> list:
    """An object's attributes (slots or dict) as sorted (name, repr) pairs, the same in either build."""
    names = set(getattr(obj, "__slots__", ())) | set(getattr(obj, "__dict__", {}))
    names |= {n for n in dir(obj) if not n.startswith("_") and not callable(getattr(obj, n, None))}
    return sorted((n, repr(getattr(obj, n, None))) for n in names if not n.startswith("_"))


def headers(data: bytes):
    seen: list = []
    try:
        h = parse_request_header(data)
        assert 0 <= h.header_size <= len(data)
        seen.append(_fields(h))
    except DecodeError as exc:
        seen.append(str(exc))
    if len(data) >= 4:
        try:
            r = parse_response_header(data[4:], int.from_bytes(data[:2], "big", signed=True) % 100,
                                      data[2] % 20)
            assert 0 <= r.header_size <= len(data) - 4
            seen.append(_fields(r))
        except DecodeError as exc:
            seen.append(str(exc))
    seen.append(bool(plausible_request(data, 0, MAX_FRAME)))
    start = find_request_start(data, MAX_FRAME)
    assert -1 <= start < max(len(data), 1)
    pending = {int.from_bytes(data[i:i + 4], "big", signed=True): None for i in range(0, min(len(data), 40), 4)}
    response = find_response_start(data, MAX_FRAME, pending)
    assert -1 <= response < max(len(data), 1)
    return seen, start, response


_TUNNEL_HEADS = (
    b"",  # the bytes as a link-layer frame of the link type below
    b"\x02" * 12 + b"\x08\x00" + bytes.fromhex("4500ffff00000000401100000a0000010a000002") + bytes.fromhex("c35012b5ffff0000"),
    b"\x02" * 12 + b"\x08\x00" + bytes.fromhex("450000ff000000004011000000000000000000000000") [:20] + bytes.fromhex("c35017c1ffff0000"),
    b"\x02" * 12 + b"\x08\x00" + bytes.fromhex("4500ffff000000004000000000000000000000") + b"\x00\x00",
)
_TUNNEL_LINKTYPES = (1, 0, 101, 108, 113, 276, 228, 229)


def tunnels(data: bytes):
    """The bytes behind each link type, and inside VXLAN, Geneve and GRE headers: decode_record
    returns a Segment within the bytes or None, counted once; it never raises."""
    from kwire.native.net_decode import DecodeCounters, decode_record

    if not data:
        return None
    linktype = _TUNNEL_LINKTYPES[data[0] % len(_TUNNEL_LINKTYPES)]
    seen: list = []
    for head in _TUNNEL_HEADS:
        packet = head + data[1:]
        counters = DecodeCounters()
        segment = decode_record(0, 1 if head else linktype, packet, counters)
        if segment is None:
            assert counters.total == 1, counters
        else:
            assert counters.total == 0 and len(segment.payload) <= len(packet) and segment.missing >= 0
            assert segment.truncated == (segment.missing > 0) or not segment.payload
        assert sum(counters.tunnels.values()) <= 32
        seen.append((None if segment is None else _fields(segment), _fields(counters)))
    return seen


# ---- issue 25: the TLS detector, key logs, times, capped tables ----------------------------------------


class _Counting:
    def __init__(self, pattern):
        self.pattern = pattern
        self.searched = 0

    def finditer(self, buf, pos: int = 0, endpos: int | None = None):
        end = len(buf) if endpos is None else min(endpos, len(buf))
        self.searched += max(0, end - pos)
        return self.pattern.finditer(buf, pos, end)


def tls_detect(data: bytes):
    import kwire.tls.detect as detect
    from kwire.pipeline import plain_kafka
    from tests.kafka.frames import request_frame
    from tests.tls.helpers import Recorder, connection

    if not data:
        return None
    cut = 1 + data[0] % 32
    prefix = b""
    if data[0] & 0x80:  # a plaintext Kafka request chain first: never TLS, whatever follows
        prefix = request_frame(3, 9, 1, "c", b"\x00" * (data[0] & 7)) * 2
        if data[0] & 0x40:  # ... after bytes that chain as records (a record value's end, issue 49)
            bodies, size = data[1:64], 1 + (data[0] & 0x38)
            prefix = b"".join(b"\x17\x03\x03" + struct.pack(">H", len(body)) + body
                              for body in (bodies[i:i + size] for i in range(0, len(bodies), size))) + prefix
    stream = prefix + data[1:]
    counting = _Counting(detect.CANDIDATE_HEADER)
    original, detect.CANDIDATE_HEADER = detect.CANDIDATE_HEADER, counting
    try:
        inner = Recorder()
        detector = detect.TlsDetector(lambda conn: inner, plain=plain_kafka)
        sniffer = detector(connection(initiator=None))
        for i in range(0, len(stream), cut):
            sniffer.data(0, i, stream[i:i + cut])
        sniffer.close(len(stream), "end")
    finally:
        detect.CANDIDATE_HEADER = original
    if prefix:
        assert sniffer.verdict == detect.NOT_TLS, "plaintext Kafka frames taken for TLS"
    if sniffer.verdict == detect.NOT_TLS:
        assert bytes(inner.stream[0]) == stream
    assert counting.searched <= 2 * len(stream) + 8, (counting.searched, len(stream))
    return sniffer.verdict, [_digest(bytes(s)) for s in inner.stream], inner.gaps, inner.closed


def keylog(data: bytes):
    from kwire.tls import KeyLog

    whole, sliced = KeyLog(), KeyLog()
    whole.add_text(data)
    step = 1 + (data[0] if data else 0)
    pos = 0
    while pos < len(data):  # whole lines per slice, as the file reader hands them over
        end = data.find(b"\n", pos + step) + 1 or len(data)
        sliced.add_text(data[pos:end])
        pos = end
    assert whole.counters() == sliced.counters()
    assert whole.lines == len(data.decode("ascii", "replace").encode("ascii", "replace").splitlines()) or \
        whole.lines >= data.count(b"\n")
    return _json(whole.counters()), whole.lines


def times(data: bytes):
    from kwire.selection import parse_when

    text = data.decode("utf-8", "replace")
    seen: list = []
    for candidate in (text, "@" + text, text + "s"):
        try:
            when = parse_when(candidate)
        except ValueError as exc:
            seen.append(str(exc))
            continue
        for value in (when.epoch_ns, when.offset_ns, when.day_ns):
            assert value is None or -(1 << 63) <= value < (1 << 63), (candidate, value)
        seen.append((when.epoch_ns, when.offset_ns, when.day_ns))
    return seen


class _Count:
    __slots__ = ("n",)

    def __init__(self) -> None:
        self.n = 0

    def merge(self, other) -> None:
        self.n += other.n


def caps(data: bytes):
    from kwire.native.caps import FoldedTable

    cap = 1 + (data[0] % 8 if data else 0)
    keys = [(f"k{b % 23}" if b & 1 else b % 17) if b & 2 else ("t", b % 5) for b in data[1:]]

    def table(items) -> FoldedTable:
        t = FoldedTable("client_ids", _Count, cap=cap)
        for key in items:
            t.row(key).n += 1
        return t

    whole = table(keys)
    split = (data[0] if data else 0) % (len(keys) + 1)
    merged = table(keys[split:])
    merged.merge(table(keys[:split]))
    assert {k: r.n for k, r in whole.items()} == {k: r.n for k, r in merged.items()}
    assert len(whole.rows) <= cap and sum(r.n for _, r in whole.items()) == len(keys)
    return sorted((repr(k), r.n) for k, r in whole.items())


TARGETS = {
    "tunnels": tunnels,
    "framing": framing,
    "decoders": decoders,
    "records": records,
    "reassembly": reassembly,
    "capture": capture,
    "pipeline": pipeline,
    "headers": headers,
    "tls_detect": tls_detect,
    "keylog": keylog,
    "times": times,
    "caps": caps,
}


def run(name: str, data: bytes):
    """Run one target; anything but a clean return (or a KwireError the target let through) is a bug."""
    return TARGETS[name](data)


def observe(name: str, data: bytes) -> str:
    """One line of text: the target's observation (a digest of it), or the exception that escaped it. Two
    builds that agree on every input give the same lines; the line says which exception, so a difference in
    how a bug shows is a difference too."""
    try:
        seen = repr(run(name, data))
    except Exception as exc:  # the target's verdict, kept as data: both builds must reach the same one
        return f"raised {type(exc).__name__}: {str(exc)[:200]!r}"
    return "ok " + hashlib.sha1(seen.encode("utf-8", "backslashreplace")).hexdigest()


if __name__ == "__main__":  # replay one input: python -m tests.fuzz.targets TARGET FILE
    print(repr(run(sys.argv[1], open(sys.argv[2], "rb").read()))[:2000])
    print("ok")
