"""kwire.capture.pcapwrite: what live capture writes reads back (kwire, tshark, editcap), and -C
rotates as tcpdump does (FILE, FILE1, FILE2, ...; a file ends with the record that took it past the
size)."""

from __future__ import annotations

import os
import shutil
import struct
import subprocess

import pytest

from kwire.capture.packet import LINKTYPE_ETHERNET
from kwire.capture.pcap import PcapReader
from kwire.capture.pcapwrite import FILE_HEADER, PcapWriter
from kwire.capture.source import open_source
from kwire.errors import CaptureError

from tests.native.test_fused import CLIENT, SERVER, ether_ipv4_tcp

TS = 1_795_000_000_000_000_001
HEADER = struct.Struct("=IIII")


def records(n: int, size: int = 100) -> list[tuple[int, bytes, int]]:
    out = []
    for i in range(n):
        frame = ether_ipv4_tcp(CLIENT, SERVER, 1000 + i * size, 1, 0x18, bytes([i % 256]) * size)
        out.append((TS + i * 1_000_001, frame, len(frame) + (i % 3 == 0) * 10))
    return out


def pieces(recs) -> list[bytes]:
    out = []
    for ts, frame, wire in recs:
        out += [HEADER.pack(ts // 10**9, ts % 10**9, len(frame), wire), frame]
    return out


def read_back(paths) -> list[tuple[int, bytes, int]]:
    got = []
    for path in paths:
        got += [(p.ts_ns, p.data, p.wire_len) for p in PcapReader(open_source(path)).packets()]
    return got


def test_records_read_back_with_nanosecond_times(tmp_path):
    recs = records(50)
    with PcapWriter(str(tmp_path / "a.pcap"), LINKTYPE_ETHERNET) as writer:
        writer.write(pieces(recs[:20]))
        writer.write([])
        writer.write(pieces(recs[20:]))
    assert writer.files == [str(tmp_path / "a.pcap")] and writer.records == 50
    assert read_back(writer.files) == recs
    reader = PcapReader(open_source(str(tmp_path / "a.pcap")))
    assert reader.nanosecond and reader.linktype == LINKTYPE_ETHERNET and reader.snaplen == 262144


def test_rotation_as_tcpdump_does(tmp_path):
    recs = records(100)
    record_size = 16 + len(recs[0][1])
    limit = 1000  # bytes, as -C 0.001 gives
    path = str(tmp_path / "r.pcap")
    with PcapWriter(path, LINKTYPE_ETHERNET, limit) as writer:
        for first in range(0, 100, 7):  # blocks of 7 records
            writer.write(pieces(recs[first:first + 7]))
    assert writer.files == [path] + [f"{path}{i}" for i in range(1, len(writer.files))]
    sizes = [os.path.getsize(f) for f in writer.files]
    for size in sizes[:-1]:  # each file went past the limit with its last record, not before
        assert size > limit and size - record_size <= limit
    assert sizes[-1] <= limit + record_size
    assert read_back(writer.files) == recs


def test_a_file_that_cannot_be_created_is_one_error(tmp_path):
    with pytest.raises(CaptureError, match=r"cannot write .*/no/such/dir/x.pcap: No such file or directory"):
        PcapWriter(str(tmp_path / "no" / "such" / "dir" / "x.pcap"), LINKTYPE_ETHERNET)


@pytest.mark.skipif(shutil.which("tshark") is None or shutil.which("editcap") is None,
                    reason="needs tshark and editcap (Debian's tshark)")
def test_tshark_and_editcap_read_it(tmp_path):
    recs = records(30)
    path = str(tmp_path / "t.pcap")
    with PcapWriter(path, LINKTYPE_ETHERNET) as writer:
        writer.write(pieces(recs))
    out = subprocess.run(["tshark", "-n", "-r", path, "-T", "fields", "-e", "frame.time_epoch", "-e", "frame.len",
                          "-e", "frame.cap_len", "-e", "tcp.seq_raw"], capture_output=True, text=True, check=True)
    rows = [line.split("\t") for line in out.stdout.splitlines()]
    assert [(r[0].replace(".", ""), int(r[1]), int(r[2]), int(r[3])) for r in rows] == \
        [(f"{ts:019d}", wire, len(frame), 1000 + i * 100) for i, (ts, frame, wire) in enumerate(recs)]
    copy = str(tmp_path / "copy.pcapng")
    subprocess.run(["editcap", "-F", "pcapng", path, copy], check=True, capture_output=True)
    from kwire.capture.files import read_captures

    assert [(p.ts_ns, p.data, p.wire_len) for p in read_captures([copy])] == recs
    assert FILE_HEADER.size == 24
