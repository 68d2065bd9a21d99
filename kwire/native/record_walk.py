"""Captured records walked out of a reader's buffer and handed to a sink: kwire.capture's loop over classic pcap.

`RecordSink` is what a capture reader hands its records to (the contract is its docstring; kwire.capture.packet
names it for the capture layer, and kwire.native.fused's sinks derive from it). `pcap_chunk` is classic pcap's record
loop: the record headers of one buffer read (as C integers, compiled), each whole record handed to the sink,
empty records alike handed over as one run (`copies`: at memcmp speed), and the runs a sink takes after a record
(`RecordSink.run`). What a reader knows of its file comes in as arguments: the record layout, the byte order,
the link type, and the reader itself for the one thing only it can say (`reader.absurd_record(offset, caplen)`:
the error of a record too long to be real). Nothing here imports a layer of kwire.

Compiled (setup.py; record_walk.pxd types the loop and makes RecordSink an extension type, so the loop calls
record() in C); run as Python, the same code: tests/capture runs on the default build, tests/test_compiled.py
compares the two on every committed capture.
"""

from __future__ import annotations

try:
    import cython
except ImportError:  # the pure-Python build where Cython is not installed
    from kwire.native.cython_stand_in import cython

from kwire.native import c_reads

# The largest block `copies` compares at once: a run of empty records alike is compared a doubling block at a
# time up to this size (the size of a reader's chunk, kwire.capture.decompress.CHUNK).
COPIES_BLOCK = 1 << 20


class RecordSink:
    """What a capture reader hands its records to, in capture order, before any Packet exists.

    A reader's `feed(sink)` calls `sink.record(ts_ns, linktype, buf, start, stop, wire_len)` for every
    packet it reads (its captured bytes are buf[start:stop], valid during the call only; wire_len
    is the length on the wire, larger when the snap length cut the packet), and yields after each
    chunk of the file, so the caller can collect what the records made. When record() returns True,
    a classic pcap reader offers the records that follow at once: `sink.run(buf, pos, end, layout)`
    takes whole records (captured length == wire length) from buf[pos:end] one after another, as it
    would take them one by one, and stops at the first it would not take or that is not whole in
    the buffer; it returns (position after the last record taken, number of records taken). The
    reader still owns the records: it checks every record it walks itself, and counts all of them.
    A live capture's ring offers `sink.frame_run(buf, pos, end, layout)` instead: the same over the
    ring frames from buf[pos] on (the last one ends at `end`); it returns (where the first frame not
    taken starts, or `end`; frames taken; their captured bytes).

    Records alike that captured no bytes (the same header or block, byte for byte, back to back: what a
    compressed bomb of empty records is made of) are handed over as one `sink.empty_run(ts_ns, linktype,
    wire_len, count)`, which must do what `count` calls of record() with no bytes would; by default it makes
    them.

    A sink subclasses this class (its run and frame_run take nothing): compiled, it is an extension type,
    and the classic pcap loop (`pcap_chunk`) calls record() in C.
    """

    __slots__ = ()

    def record(self, ts_ns: int, linktype: int, buf, start: int, stop: int, wire_len: int) -> bool:
        raise NotImplementedError

    def run(self, buf, pos: int, end: int, layout) -> tuple[int, int]:
        return pos, 0

    def frame_run(self, buf, pos: int, end: int, layout) -> tuple[int, int, int]:
        return pos, 0, 0

    def empty_run(self, ts_ns: int, linktype: int, wire_len: int, count: int) -> None:
        for _ in range(count):
            self.record(ts_ns, linktype, b"", 0, 0, wire_len)


def copies(buf: bytes, pos: int, size: int, end: int) -> int:
    """How many `size`-byte pieces of buf, back to back from pos on (and before end), are byte for byte the
    one at pos (1 at least): compared a doubling block at a time, so a run costs a few memcmp's of its bytes."""
    block = buf[pos:pos + size]
    p = pos + size
    while p + len(block) <= end and buf[p:p + len(block)] == block:
        p += len(block)
        if len(block) < COPIES_BLOCK:
            block += block
    while len(block) > size:  # what is left is shorter than block: its halves, greedily
        block = block[:len(block) // 2]
        if p + len(block) <= end and buf[p:p + len(block)] == block:
            p += len(block)
    return (p - pos) // size


def pcap_chunk(reader, buf, pos: int, base: int, sink: RecordSink, layout, little: bool, linktype: int,
               counts: list, until: int) -> tuple[int, int]:
    """Hand the whole classic pcap records of buf that start from pos on, before `until`, to `sink`; (where the
    next record starts, the bytes needed from there to read it, or 0 when `until` ended the walk first).
    `layout` is the file's kwire.capture.packet.RecordLayout, `little` its byte order, `base` the file offset of
    buf[0]; `counts` gets (records, captured bytes, wire bytes, cut records) of the walk."""
    unpack, hsize, mult, limit = layout.unpack, layout.header_size, layout.ts_mult, layout.max_caplen
    run = sink.run
    end = len(buf)
    n = cap = wire = cut = 0
    caplen = 0
    fast = cython.compiled and type(buf) is bytes  # compiled: the header read in C (kwire/native/c_reads.pxd)
    while pos + hsize <= end:
        if pos >= until:
            counts[:] = (n, cap, wire, cut)
            return pos, 0
        if not fast:
            sec, frac, caplen, wirelen = unpack(buf, pos)
        elif little:
            sec, frac = c_reads._u32le(buf, pos), c_reads._u32le(buf, pos + 4)
            caplen, wirelen = c_reads._u32le(buf, pos + 8), c_reads._u32le(buf, pos + 12)
        else:
            sec, frac, caplen, wirelen = c_reads._u32(buf, pos), c_reads._u32(buf, pos + 4), \
                c_reads._u32(buf, pos + 8), c_reads._u32(buf, pos + 12)
        if caplen > limit:
            counts[:] = (n, cap, wire, cut)
            raise reader.absurd_record(base + pos, caplen)
        start = pos + hsize
        stop = start + caplen
        if stop > end:
            break
        if caplen == 0 and stop + hsize <= end and buf[pos:stop] == buf[stop:stop + hsize]:
            k = copies(buf, pos, hsize, end)  # empty records alike, back to back: one call for all
            pos += k * hsize
            n += k
            wire += k * wirelen
            if wirelen:
                cut += k
            sink.empty_run(sec * 1_000_000_000 + frac * mult, linktype, wirelen, k)
            continue
        pos = stop
        n += 1
        cap += caplen
        wire += wirelen
        if caplen < wirelen:
            cut += 1
        if sink.record(sec * 1_000_000_000 + frac * mult, linktype, buf, start, stop, wirelen):
            after, k = run(buf, pos, end, layout)
            if k:
                n += k
                k = after - pos - k * hsize  # their captured (= wire) bytes
                cap += k
                wire += k
                pos = after
    counts[:] = (n, cap, wire, cut)
    return pos, (hsize + caplen if pos + hsize <= end else hsize)
