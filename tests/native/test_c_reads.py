"""kwire/native/c_reads.py (the Python twin of kwire/native/c_reads.pxd, whose C the compiled decoders inline): each read gives
what struct gives for the same bytes, from bytes, a bytearray or a contiguous memoryview, and raises IndexError
for bytes that are not all there or a buffer of another kind. The C readers are checked through the compiled
decoders (tests/codec/test_aot.py) and, here, on buffers of every kind a decoder may be handed."""

from __future__ import annotations

import random
import struct

import pytest

from kwire.native import c_reads
from kwire.codec.compiler import decoder_for
from kwire.codec.schemas import schema_for

NUMBERS = [(c_reads._i8, ">b"), (c_reads._i16, ">h"), (c_reads._u16, ">H"), (c_reads._i32, ">i"),
           (c_reads._u32, ">I"), (c_reads._i64, ">q"), (c_reads._f64, ">d")]


class _Bytes(bytes):
    """A subclass, as kwire.native.framing.CutFrame is."""


def kinds(data: bytes):
    return [data, bytearray(data), _Bytes(data), memoryview(data), memoryview(b"xx" + data)[2:],
            memoryview(bytearray(data))]


@pytest.mark.parametrize("seed", range(3))
def test_numbers_are_struct_s(seed):
    rng = random.Random(seed)
    data = rng.randbytes(64)
    for buf in kinds(data):
        for read, fmt in NUMBERS:
            size = struct.calcsize(fmt)
            for pos in (0, 1, 7, 64 - size):
                want = struct.unpack_from(fmt, data, pos)[0]
                got = read(buf, pos)
                assert got == want or (want != want and got != got), (read, fmt, pos)
        assert [c_reads._u8(buf, i) for i in range(64)] == list(data)
        assert [c_reads._bool(buf, i) for i in range(64)] == [b != 0 for b in data]
        assert c_reads._b16(buf, 3) == data[3:19]
        assert c_reads._bytes_at(buf, 5, 40) == data[5:40]
        for pos in (0, 3):
            assert c_reads._v2_head(buf, pos) == struct.unpack_from(">qiibIhiqqqhii", data, pos)
        with pytest.raises(IndexError):
            c_reads._v2_head(buf, 4)  # 61 bytes from 4 run past the 64


def test_strings_are_utf8_with_replacement():
    data = "caf\u00e9 \u2603".encode() + b"\xff\xfe" + b"end"
    for buf in kinds(data):
        assert c_reads._utf8(buf, 0, len(data)) == str(data, "utf-8", "replace")
        assert c_reads._utf8(buf, 3, 3) == ""


def test_a_memoryview_of_other_items_is_read_as_its_bytes():
    import array

    numbers = array.array("i", [1, -2, 3])
    view = memoryview(numbers)
    raw = numbers.tobytes()
    assert c_reads._u8(view, 4) == raw[4]
    assert c_reads._bytes_at(view, 0, 12) == raw
    assert c_reads._i32(view, 8) == struct.unpack_from(">i", raw, 8)[0]


@pytest.mark.parametrize("read,args", [(c_reads._u8, (4,)), (c_reads._i32, (1,)), (c_reads._i64, (0,)),
                                       (c_reads._b16, (0,)), (c_reads._utf8, (2, 6)), (c_reads._bytes_at, (-1, 2)),
                                       (c_reads._u8, (-1,)), (c_reads._utf8, (3, 2))])
def test_bytes_not_all_there_raise_index_error(read, args):
    for buf in kinds(b"abcd"):
        with pytest.raises(IndexError):
            read(buf, *args)


def test_other_buffers_raise_index_error():
    strided = memoryview(b"abcdefgh")[::2]
    for buf in (strided, "abcd", [1, 2, 3, 4], None):
        with pytest.raises(IndexError):
            c_reads._u8(buf, 0)
    assert c_reads._plain(strided).tobytes() == b"aceg"
    plain = memoryview(b"abcd")
    assert c_reads._plain(plain) is plain


def test_a_decoder_reads_every_kind_of_byte_buffer_alike():
    """The compiled decoders (where built) and the generated ones give the same body from bytes, a bytearray, a
    memoryview and a memoryview of a slice: the body's bytes, however kwire holds them. (A strided memoryview,
    which kwire never makes, is read as its bytes compiled, c_reads._plain; the generated source refuses it.)"""
    decode = decoder_for(schema_for(12, "request"), 4)  # HeartbeatRequest v4 (flexible)
    body = b"\x06group\x00\x00\x00\x07\x05memb\x00\x00"
    want = decode(body, 0)
    assert want[0] == {"GroupId": "group", "GenerationId": 7, "MemberId": "memb", "GroupInstanceId": None}
    for buf in (bytearray(body), memoryview(body), memoryview(b"--" + body)[2:]):
        assert decode(buf, 0) == want
