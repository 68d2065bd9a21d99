"""Compressed captures by content: zstd, lz4 frame, xz and bzip2 (and gzip) give the plain capture's
exchanges, from a file or from standard input; damage is one CaptureError line after the good packets;
decompression is streamed (a bomb does not grow memory)."""

from __future__ import annotations

import bz2
import gzip
import lzma
import subprocess
import sys
import tracemalloc

import lz4.frame
import pytest
import zstandard

from kwire.capture.files import CAPTURE_NAME, open_capture, read_captures
from kwire.errors import CaptureError

PLAIN = "captures/produce-consume-zstd.pcap"
COMPRESSORS = {
    "gzip": gzip.compress,
    "zstd": lambda data: zstandard.ZstdCompressor().compress(data),
    "lz4": lz4.frame.compress,
    "xz": lzma.compress,
    "bzip2": bz2.compress,
}
SUFFIX = {"gzip": "gz", "zstd": "zst", "lz4": "lz4", "xz": "xz", "bzip2": "bz2"}


def inspect(*args, stdin=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "kwire", "inspect", "--json", *args], input=stdin,
                          capture_output=True)


@pytest.fixture(scope="module")
def plain_output():
    return inspect(PLAIN).stdout


@pytest.mark.parametrize("name", sorted(COMPRESSORS))
def test_compressed_capture_gives_the_plain_exchanges(tmp_path, plain_output, name):
    data = open(PLAIN, "rb").read()
    path = tmp_path / f"c.pcap.{SUFFIX[name]}"
    path.write_bytes(COMPRESSORS[name](data))
    assert CAPTURE_NAME.search(path.name)
    with open_capture(path) as reader:
        assert reader.compression == name
    got = inspect(str(path))
    assert got.returncode == 0 and got.stdout == plain_output and got.stdout
    piped = inspect("-", stdin=path.read_bytes())
    assert piped.returncode == 0 and piped.stdout == plain_output


@pytest.mark.parametrize("name", sorted(COMPRESSORS))
def test_concatenated_streams_are_read_one_after_another(tmp_path, name):
    data = open(PLAIN, "rb").read()
    half = len(data) // 2
    path = tmp_path / "two.bin"
    path.write_bytes(COMPRESSORS[name](data[:half]) + COMPRESSORS[name](data[half:]))
    assert len(list(read_captures([path]))) == len(list(read_captures([PLAIN])))


@pytest.mark.parametrize("name", sorted(COMPRESSORS))
def test_damaged_stream_is_one_error_after_the_good_packets(tmp_path, name):
    plain = open(PLAIN, "rb").read()
    data = plain[:24] + plain[24:] * 8  # one pcap header, its records eight times
    packed = COMPRESSORS[name](data)
    path = tmp_path / "cut.bin"
    path.write_bytes(packed[: len(packed) * 2 // 3])
    got = inspect(str(path))
    assert got.returncode == 1
    lines = got.stderr.decode().strip().splitlines()
    errors = [line for line in lines if line.startswith("kwire: error:")]
    cut_short = f"{name} data cut short: its {len(packed) * 2 // 3} bytes end inside a stream"
    assert len(errors) == 1 and cut_short in errors[0]
    assert "Traceback" not in got.stderr.decode()


BOMB = 128_000_000


@pytest.mark.parametrize("name", ["zstd", "xz", "bzip2", "lz4"])
def test_a_bomb_is_streamed_with_bounded_memory(tmp_path, name):
    """128 MB of one repeated pcap record, compressed to little: read with memory far below its size (xz takes
    most of the test's time compressing it: 200 MB took 31 s of CI's 20 minutes)."""
    header = open(PLAIN, "rb").read(24)
    record = b"\0" * 8 + (60).to_bytes(4, "little") * 2 + b"\x01" * 60
    body = record * (BOMB // len(record))
    path = tmp_path / "bomb.bin"
    path.write_bytes(COMPRESSORS[name](header + body))
    del body
    tracemalloc.start()
    try:
        with open_capture(path) as reader:
            count = sum(1 for _ in reader)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert count == BOMB // len(record)
    assert peak < 32 << 20, peak


def test_empty_stream_is_an_error(tmp_path):
    path = tmp_path / "e.zst"
    path.write_bytes(zstandard.ZstdCompressor().compress(b""))
    with pytest.raises(CaptureError, match="decompresses to nothing"):
        open_capture(path)


def _exchanges(path):
    from kwire.pipeline import RunSummary, analyze_files

    summary = RunSummary()
    return list(analyze_files([str(path)], summary=summary)), summary.capture_errors


@pytest.mark.parametrize("name", sorted(COMPRESSORS))
@pytest.mark.parametrize("fraction", [0.3, 0.6, 0.9])
def test_a_cut_capture_gives_every_exchange_before_the_cut(tmp_path, name, fraction):
    """bulk-fetch compressed (in streams of 256 KiB) and cut: the exchanges of the plain capture cut where the
    format's own decoder stops, and one line saying where (issue 49: lz4 and xz cut at 90 % gave none)."""
    from tests.hostile3.compressed import BULK, compress, reference

    plain = BULK.read_bytes()
    packed = compress(name, plain, 256 << 10)
    cut = packed[:int(len(packed) * fraction)]
    upto = len(reference(name, cut)[0])
    assert plain.startswith(reference(name, cut)[0])
    (tmp_path / "cut.bin").write_bytes(cut)
    (tmp_path / "plain.pcap").write_bytes(plain[:upto])
    got, errors = _exchanges(tmp_path / "cut.bin")
    expected, _ = _exchanges(tmp_path / "plain.pcap")
    assert got == expected and len(got) > 0
    assert errors == [f"{tmp_path / 'cut.bin'}: {name} data cut short: its {len(cut)} bytes end inside a stream, "
                      f"after byte {upto} (uncompressed)"]
