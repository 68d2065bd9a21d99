"""kwire/native/c_reads.pxd's reads in Python: what runs where that file's C is not compiled in (the pure-Python
build, and the tests that run kwire.codec.aot_build's module source as Python). Each read takes the bytes at
`pos` of bytes, a bytearray (or a subclass of either) or a C-contiguous memoryview (as struct reads them) and raises IndexError
when they are not all there, or the buffer is of another kind, as the C ones do.
"""

from __future__ import annotations

import struct

_I8, _I16, _U16, _I32, _U32, _I64, _F64 = (struct.Struct(">" + code) for code in "bhHiIqd")
_V2_HEAD = struct.Struct(">qiibIhiqqqhii")  # a v2 record batch's header up to its record count (61 bytes)
_REQUEST_HEAD = struct.Struct(">hhih")  # a request header's api key, version, correlation id, client id length
# kwire.net.layout's ETH_IPV4_TCP_KEYED and RAW_IPV4_TCP_KEYED without their key (_ipv4_tcp)
_ETH_IPV4_TCP = struct.Struct("!12xIH2xHxB14xIIBB")
_RAW_IPV4_TCP = struct.Struct("!HH2xHxB14xIIBB")
_BYTE = struct.Struct("B")


def _in(buf, pos: int, size: int) -> None:
    kind = type(buf)
    if kind is memoryview:
        if not buf.c_contiguous or pos < 0 or size < 0 or size > buf.nbytes - pos:
            raise IndexError("index out of range")
    elif not isinstance(buf, (bytes, bytearray)) or pos < 0 or size < 0 or size > len(buf) - pos:
        raise IndexError("index out of range")


def _u8(buf, pos: int) -> int:
    _in(buf, pos, 1)
    return _BYTE.unpack_from(buf, pos)[0]


def _bool(buf, pos: int) -> bool:
    return _u8(buf, pos) != 0


def _number(reader: struct.Struct):
    def read(buf, pos: int):
        _in(buf, pos, reader.size)
        return reader.unpack_from(buf, pos)[0]
    return read


_i8, _i16, _u16, _i32, _u32, _i64, _f64 = map(_number, (_I8, _I16, _U16, _I32, _U32, _I64, _F64))
_u32le = _number(struct.Struct("<I"))  # the one little-endian read: a classic pcap file's record header


def _raw(buf, pos: int, stop: int):
    _in(buf, pos, stop - pos)
    return (buf.cast("B") if type(buf) is memoryview and (buf.format != "B" or buf.ndim != 1) else buf)[pos:stop]


def _b16(buf, pos: int) -> bytes:
    return bytes(_raw(buf, pos, pos + 16))


def _bytes_at(buf, pos: int, stop: int) -> bytes:
    return bytes(_raw(buf, pos, stop))


def _utf8(buf, pos: int, stop: int) -> str:
    return str(_raw(buf, pos, stop), "utf-8", "replace")


def _view(buf) -> memoryview:
    return memoryview(buf)


def _is_plain(mv: memoryview) -> bool:
    return mv.ndim == 1 and mv.itemsize == 1 and mv.c_contiguous and mv.format == "B"


def _plain(mv: memoryview) -> memoryview:
    if _is_plain(mv):
        return mv
    return memoryview(mv.tobytes())


def _request_head(buf) -> tuple:
    _in(buf, 0, _REQUEST_HEAD.size)
    return _REQUEST_HEAD.unpack_from(buf, 0)


def _ipv4_tcp(buf, frame: int, ethernet: bool) -> tuple:
    if ethernet:
        _in(buf, frame, _ETH_IPV4_TCP.size)
        return _ETH_IPV4_TCP.unpack_from(buf, frame)
    _in(buf, frame + 14, _RAW_IPV4_TCP.size)
    return _RAW_IPV4_TCP.unpack_from(buf, frame + 14)


def _v2_head(buf, pos: int) -> tuple:
    _in(buf, pos, _V2_HEAD.size)
    return _V2_HEAD.unpack_from(buf, pos)
