"""kwire.capture.decompress through kwire.capture.source: every format is read exactly, whatever the sizes of its
streams and of the reads, as its own decoder reads it; a file cut short hands out everything its own decoder makes
of it, then one CaptureError saying where it ended (issue 49: gzip members of 64 KiB lost data; lz4, xz and bzip2
cut lost all of it, zstd cut said nothing)."""

from __future__ import annotations

import gzip
import io

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from kwire.capture.source import open_source
from kwire.errors import CaptureError
from tests.hostile3.compressed import FORMATS, PENDING, compress, pending_in_members, reference

# More than the chunk a Source reads first (1 MiB), so reads of every size meet the ends of streams
DATA = gzip.decompress(PENDING.read_bytes())[:1_500_000]


def read_all(packed: bytes, size: int) -> bytes:
    """What a Source of `packed` hands out, `size` bytes a read after its first chunk."""
    src = open_source(io.BytesIO(packed))
    out = [src.head]
    while chunk := src.read(size):
        assert len(chunk) <= size
        out.append(chunk)
    return b"".join(out)


@pytest.mark.parametrize("fmt", FORMATS)
@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(piece=st.integers(1, 96).map(lambda k: k * 2048) | st.integers(500, 200_000),
       size=st.sampled_from([512, 4096, 65536, 1 << 20]) | st.integers(64, 300_000))
@example(piece=64 << 10, size=4096)
@example(piece=300_000, size=1 << 20)
def test_streams_are_read_exactly_whatever_the_read_sizes(fmt, piece, size):
    packed = compress(fmt, DATA, piece)
    whole, ended = reference(fmt, packed)
    assert ended and whole == DATA
    assert read_all(packed, size) == whole


def test_pending_cap_in_64_kib_members_reads_as_gzip_decompress_does():
    packed = pending_in_members()
    assert read_all(packed, 4096) == gzip.decompress(packed)


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("fraction", [0.1, 0.5, 0.9, 0.999])
@pytest.mark.parametrize("piece", [None, 100_000])
def test_a_cut_file_hands_out_what_its_decoder_makes_then_says_where_it_ended(fmt, fraction, piece):
    packed = compress(fmt, DATA, piece)
    cut = packed[:int(len(packed) * fraction)]
    expected, ended = reference(fmt, cut)
    assert not ended
    got = []
    with pytest.raises(CaptureError) as err:
        src = open_source(io.BytesIO(cut))
        got.append(src.head)
        while chunk := src.read(4096):
            got.append(chunk)
    assert b"".join(got) == expected
    assert str(err.value) == (f"<stream>: {fmt} data cut short: its {len(cut)} bytes end inside a stream, "
                              f"after byte {len(expected)} (uncompressed)")


@pytest.mark.parametrize("fmt", FORMATS)
def test_zero_padding_between_streams_is_skipped_and_garbage_is_said(fmt):
    packed = compress(fmt, DATA, 100_000)
    half = compress(fmt, DATA[:100_000])
    assert read_all(half + bytes(512) + packed[len(half):], 65536) == DATA
    with pytest.raises(CaptureError, match=f"garbage after the {fmt} data"):
        read_all(half + b"not a stream", 65536)


def test_pzstd_skippable_frames_are_read():
    import struct

    frames = [compress("zstd", DATA[i:i + 100_000]) for i in range(0, len(DATA), 100_000)]
    packed = b"".join(struct.pack("<III", 0x184D2A50, 4, len(f)) + f for f in frames)  # as pzstd writes them
    assert read_all(packed, 65536) == DATA
