"""The compiled decoders' reads (kwire/codec/c_reads.pxd, which Cython inlines into kwire.codec._aot_*) in
Python: what the module source kwire.codec.aot_build makes calls when it runs as Python, in the tests
(tests/codec/test_aot.py) that check its rewriting of the generated source. Each read takes the bytes at
`pos` of a bytes object or memoryview and raises IndexError when they are not all there, as the C ones do.
"""

from __future__ import annotations

import struct

_I8, _I16, _U16, _I32, _U32, _I64, _F64 = (struct.Struct(">" + code) for code in "bhHiIqd")


def _in(buf, pos: int, size: int) -> None:
    if type(buf) is not bytes and type(buf) is not memoryview or pos < 0 or size < 0 or size > len(buf) - pos:
        raise IndexError("index out of range")


def _u8(buf, pos: int) -> int:
    _in(buf, pos, 1)
    return buf[pos]


def _bool(buf, pos: int) -> bool:
    return _u8(buf, pos) != 0


def _number(reader: struct.Struct):
    def read(buf, pos: int):
        _in(buf, pos, reader.size)
        return reader.unpack_from(buf, pos)[0]
    return read


_i8, _i16, _u16, _i32, _u32, _i64, _f64 = map(_number, (_I8, _I16, _U16, _I32, _U32, _I64, _F64))


def _b16(buf, pos: int) -> bytes:
    _in(buf, pos, 16)
    return bytes(buf[pos:pos + 16])


def _bytes_at(buf, pos: int, stop: int) -> bytes:
    _in(buf, pos, stop - pos)
    return bytes(buf[pos:stop])


def _utf8(buf, pos: int, stop: int) -> str:
    _in(buf, pos, stop - pos)
    return str(buf[pos:stop], "utf-8", "replace")


def _plain(mv: memoryview) -> memoryview:
    if mv.ndim == 1 and mv.itemsize == 1 and mv.c_contiguous and mv.format == "B":
        return mv
    return memoryview(mv.tobytes())
