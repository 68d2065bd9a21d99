"""open_capture / read_captures: detection by magic, gzip, bad paths, merging, stats, streaming."""

from __future__ import annotations

import gzip
import io

import pytest

from kwire.capture.files import open_capture, read_captures
from kwire.capture.packet import HANDOFF
from kwire.capture.decompress import decompressor
from kwire.capture.source import CHUNK
from kwire.capture.stats import CaptureStats
from kwire.errors import CaptureError
from tests.capture import builders as b

T0 = 1_700_000_000_000_000_000


def pcap_file(tmp_path, name, ts_list, **kw):
    path = tmp_path / name
    path.write_bytes(b.pcap([(t, name.encode() + b"#%d" % i) for i, t in enumerate(ts_list)], **kw))
    return path


def pcapng_bytes(ts_us_list, tag=b"ng"):
    return b.shb() + b.idb(1) + b"".join(b.epb(0, t, tag + b"#%d" % i) for i, t in enumerate(ts_us_list))


# ---- detection ---------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["x.pcap", "x.gz", "x.pcapng", "noext"])
def test_gzip_detected_by_magic_not_name(tmp_path, name):
    raw = b.pcap([(T0, b"abc")])
    path = tmp_path / name
    path.write_bytes(gzip.compress(raw))
    r = open_capture(path)
    assert (r.format, r.compression) == ("pcap", "gzip")
    assert [p.data for p in r] == [b"abc"]


def test_plain_file_named_gz(tmp_path):
    path = tmp_path / "x.pcapng.gz"
    path.write_bytes(pcapng_bytes([1]))
    r = open_capture(path)
    assert (r.format, r.compression) == ("pcapng", None)
    assert len(list(r)) == 1


def test_gzip_pcapng_multi_member_and_zero_padding(tmp_path):
    raw = pcapng_bytes(range(100))
    path = tmp_path / "m.pcapng.gz"
    path.write_bytes(gzip.compress(raw[:1000]) + gzip.compress(raw[1000:]) + b"\0" * 64)
    assert [p.data for p in open_capture(path)] == [b"ng#%d" % i for i in range(100)]


def test_binary_stream_accepted():
    stream = io.BytesIO(b.pcap([(T0, b"s")]))
    assert [p.data for p in open_capture(stream)] == [b"s"]


# ---- bad paths and non-captures ---------------------------------------------------------------


def test_missing_file(tmp_path):
    with pytest.raises(CaptureError, match=r"nope\.pcap: no such file$"):
        open_capture(tmp_path / "nope.pcap")


def test_directory(tmp_path):
    with pytest.raises(CaptureError, match="is a directory"):
        open_capture(tmp_path)


def test_empty_file(tmp_path):
    path = tmp_path / "e.pcap"
    path.write_bytes(b"")
    with pytest.raises(CaptureError, match=r"e\.pcap: empty file$"):
        open_capture(path)


def test_empty_gzip(tmp_path):
    path = tmp_path / "e.gz"
    path.write_bytes(gzip.compress(b""))
    with pytest.raises(CaptureError, match="decompresses to nothing"):
        open_capture(path)


@pytest.mark.parametrize(
    "data, words",
    [
        (b"GET / HTTP/1.1\r\n\r\n", "not a pcap or pcapng capture (starts with 0x47455420)"),
        (b"\x28\xb5\x2f\xfd" + b"\0" * 40, ": zstd data"),  # read as zstd: it holds nothing
        (b"ab", "truncated file header: only 2 bytes"),
        (b"\x00" * 100, "not a pcap or pcapng capture (starts with 0x00000000)"),
    ],
)
def test_not_a_capture(tmp_path, data, words):
    path = tmp_path / "n.bin"
    path.write_bytes(data)
    with pytest.raises(CaptureError) as err:
        open_capture(path)
    assert words in str(err.value) and str(path) in str(err.value)


def test_gzip_of_garbage(tmp_path):
    path = tmp_path / "g.gz"
    path.write_bytes(gzip.compress(b"hello, not a capture"))
    with pytest.raises(CaptureError, match="not a pcap or pcapng capture"):
        open_capture(path)


# ---- damaged gzip: good packets first, then the error -------------------------------------------


def test_truncated_gzip_yields_what_it_has(tmp_path):
    raw = b.pcap([(T0 + i * 1000, b"%06d" % i * 20) for i in range(30000)])
    comp = gzip.compress(raw)
    path = tmp_path / "t.pcap.gz"
    path.write_bytes(comp[: len(comp) // 2])
    got = []
    with pytest.raises(CaptureError) as err:
        for p in open_capture(path):
            got.append(p.data)
    assert 1000 < len(got) < 30000
    assert got == [b"%06d" % i * 20 for i in range(len(got))]
    assert "(uncompressed)" in str(err.value) and str(path) in str(err.value)


def test_corrupt_gzip_crc(tmp_path):
    raw = b.pcap([(T0, b"abc")])
    comp = bytearray(gzip.compress(raw))
    comp[-8] ^= 0xFF  # CRC32 of the member
    path = tmp_path / "c.gz"
    path.write_bytes(bytes(comp))
    with pytest.raises(CaptureError, match="damaged gzip data"):
        list(open_capture(path))


def test_gzip_garbage_after_member(tmp_path):
    path = tmp_path / "c.gz"
    path.write_bytes(gzip.compress(b.pcap([(T0, b"abc")])) + b"trailing junk")
    got = []
    with pytest.raises(CaptureError, match="garbage after the gzip data"):
        for p in open_capture(path):
            got.append(p.data)
    assert got == [b"abc"]


def test_gunzip_output_bounded_per_read():
    bomb = gzip.compress(b"\0" * (64 << 20), 9)  # 64 MiB of zeros in ~64 KiB
    _, g = decompressor(io.BytesIO(bomb[1000:]), bomb[:1000])
    sizes = []
    while True:
        chunk = g.read(CHUNK)
        if not chunk:
            break
        assert len(chunk) <= CHUNK
        sizes.append(len(chunk))
    assert sum(sizes) == 64 << 20


# ---- streaming: memory does not grow with the file -------------------------------------------


class CountingStream(io.BytesIO):
    def __init__(self, data):
        super().__init__(data)
        self.largest = 0

    def read(self, n=-1):
        assert n is not None and n > 0, "the reader must never read the whole file"
        out = super().read(n)
        self.largest = max(self.largest, len(out))
        return out


@pytest.mark.parametrize("kind", ["pcap", "pcapng", "gzip"])
def test_reads_in_chunks(kind):
    recs = [(T0 + i, b"z" * 1400) for i in range(6000)]  # ~8.5 MiB
    if kind == "pcapng":
        raw = b.shb() + b.idb(1) + b"".join(b.epb(0, t, d) for t, d in recs)
    else:
        raw = b.pcap(recs)
    data = gzip.compress(raw, 1) if kind == "gzip" else raw
    stream = CountingStream(data)
    it = iter(open_capture(stream))
    next(it)
    assert stream.tell() <= 2 * CHUNK  # one packet needs one chunk, not the file
    assert 1 + sum(1 for _ in it) == len(recs)
    assert stream.largest <= CHUNK


# ---- merging and stats ------------------------------------------------------------------------


def test_read_captures_merges_by_time_stably(tmp_path):
    a = pcap_file(tmp_path, "a", [T0 + 10_000, T0 + 30_000, T0 + 50_000])
    c = tmp_path / "c.pcapng.gz"
    c.write_bytes(gzip.compress(pcapng_bytes([1_700_000_000_000_020, 1_700_000_000_000_030], b"c")))
    bb = pcap_file(tmp_path, "b", [T0, T0 + 30_000, T0 + 60_000], nano=True)
    stats = CaptureStats()
    got = [(p.ts_ns, p.data) for p in read_captures([a, c, bb], stats)]
    assert [t for t, _ in got] == sorted(t for t, _ in got)
    assert [d for _, d in got] == [b"b#0", b"a#0", b"c#0", b"a#1", b"c#1", b"b#1", b"a#2", b"b#2"]
    assert stats.files == 3 and stats.packets == 8
    assert stats.linktypes == {1: {str(a), str(bb), str(c)}}


def test_read_captures_opens_everything_first(tmp_path):
    a = pcap_file(tmp_path, "a", [T0])
    bad = tmp_path / "bad.pcap"
    bad.write_bytes(b"not a capture at all")
    with pytest.raises(CaptureError, match="bad.pcap"):
        read_captures([a, bad])


def test_read_captures_damaged_file_does_not_stop_the_others(tmp_path):
    a = pcap_file(tmp_path, "a", [T0 + i * 1000 for i in range(10)])
    damaged = tmp_path / "d.pcap"
    damaged.write_bytes(b.pcap([(T0 + i * 1000 + 500, b"d#%d" % i) for i in range(10)])[:-3])
    got = []
    with pytest.raises(CaptureError, match=r"d\.pcap: truncated record"):
        for p in read_captures([a, damaged]):
            got.append(p.data)
    assert [d for d in got if d.startswith(b"a")] == [b"a#%d" % i for i in range(10)]
    assert [d for d in got if d.startswith(b"d")] == [b"d#%d" % i for i in range(9)]


def test_two_damaged_files_one_message(tmp_path):
    paths = []
    for name in ("x.pcap", "y.pcap"):
        p = tmp_path / name
        p.write_bytes(b.pcap([(T0, b"abc")])[:-1])
        paths.append(p)
    with pytest.raises(CaptureError) as err:
        list(read_captures(paths))
    msg = str(err.value)
    assert "x.pcap" in msg and "y.pcap" in msg and "\n" not in msg


def test_single_file_read_captures(tmp_path):
    a = pcap_file(tmp_path, "a", [T0, T0 + 1000])
    assert [p.data for p in read_captures([a])] == [b"a#0", b"a#1"]


def test_stats_current_when_reader_closed_early(tmp_path):
    """Readers count what they read, a hand-off window at a time (kwire.capture.packet.HANDOFF): a reader
    closed early has counted the windows it handed over, no more and no less."""
    path = tmp_path / "big.pcap"
    path.write_bytes(b.pcap([(T0 + i, bytes(1000)) for i in range(3000)]))  # ~3 MB: several chunks
    stats = CaptureStats()
    with open_capture(path, stats) as r:
        for i, _ in enumerate(r):
            if i == 9:
                break
    per_record = 16 + 1000
    assert 10 <= stats.packets < 3000
    assert stats.packets == -(-HANDOFF // per_record)  # the records that start in the first window
    assert stats.captured_bytes == stats.wire_bytes == 1000 * stats.packets


def test_reader_closes_file(tmp_path):
    a = pcap_file(tmp_path, "a", [T0])
    r = open_capture(a)
    list(r)
    assert r._source._raw.closed
    r2 = open_capture(a)
    r2.close()  # never iterated
    assert r2._source._raw.closed


def test_next_on_reader(tmp_path):
    a = pcap_file(tmp_path, "a", [T0, T0 + 1000])
    r = open_capture(a)
    assert next(r).data == b"a#0"
    assert next(r).data == b"a#1"
    with pytest.raises(StopIteration):
        next(r)


def test_zlib_error_is_capture_error_not_traceback(tmp_path):
    comp = bytearray(gzip.compress(b.pcap([(T0, b"q" * 5000)] * 20), 1))
    for i in range(30, len(comp) - 20, 7):
        comp[i] ^= 0x5A
    path = tmp_path / "z.gz"
    path.write_bytes(bytes(comp))
    with pytest.raises(CaptureError, match="damaged gzip data"):
        list(open_capture(path))
