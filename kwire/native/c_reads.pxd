# Reads of a body's bytes in C, inlined by Cython where this file is cimported: big-endian numbers, one byte,
# a UTF-8 string and a run of bytes, from bytes, a bytearray (or a subclass of either) or a C-contiguous
# memoryview (its memory read as bytes, as struct reads it). kwire/native/c_reads.py is the same in Python.
# - The compiled decoders: kwire.codec.aot_build rewrites the generated source's struct unpacks, byte indexing
#   and string slices into calls of these.
# - A compiled module of any layer: its .py imports kwire/native/c_reads.py as `c_reads`, its .pxd cimports this file
#   under the same name (`cimport kwire.native.c_reads as c_reads`), so compiled, `c_reads._i32(buf, pos)` is the
#   inline C, and in the pure-Python build a call of the Python read. Used where one field is read at a time
#   (the Kafka framer's lengths, the pairing's correlation ids and Acks): where a struct unpack reads several
#   fields at once, several Python calls would cost the pure-Python build more than it does.
#
# Each read checks its bytes lie in the buffer (0 <= pos, pos + size <= its length) and raises IndexError
# when not (or when the buffer is of another kind): a read never leaves the buffer, whatever its caller
# checked. A memoryview must not be released while it is read (kwire never releases one it reads).

from cpython.buffer cimport PyBuffer_IsContiguous
from cpython.bytearray cimport PyByteArray_AS_STRING, PyByteArray_GET_SIZE
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize, PyBytes_GET_SIZE
from cpython.memoryview cimport PyMemoryView_FromObject, PyMemoryView_GET_BUFFER
from cpython.unicode cimport PyUnicode_DecodeUTF8
from libc.string cimport memcpy


cdef inline const unsigned char* _at(object buf, Py_ssize_t pos, Py_ssize_t size) noexcept:
    """The address of buf[pos:pos + size], NULL when those bytes are not all in buf (or buf is not bytes, a
    bytearray or a C-contiguous memoryview)."""
    cdef const unsigned char* data
    cdef Py_ssize_t n
    cdef Py_buffer* view
    if isinstance(buf, bytes):  # a subclass too (kwire.native.framing.CutFrame)
        data = <const unsigned char*>PyBytes_AS_STRING(buf)
        n = PyBytes_GET_SIZE(buf)
    elif type(buf) is memoryview:
        view = PyMemoryView_GET_BUFFER(buf)
        if not PyBuffer_IsContiguous(view, b'C'):  # strided, or indirect (suboffsets): not one run of bytes
            return NULL
        data = <const unsigned char*>view.buf
        n = view.len
    elif isinstance(buf, bytearray):
        data = <const unsigned char*>PyByteArray_AS_STRING(buf)
        n = PyByteArray_GET_SIZE(buf)
    else:
        return NULL
    if pos < 0 or size < 0 or size > n - pos:
        return NULL
    return data + pos


cdef inline const unsigned char* _in(object buf, Py_ssize_t pos, Py_ssize_t size) except NULL:
    cdef const unsigned char* p = _at(buf, pos, size)
    if p == NULL:
        raise IndexError("index out of range")
    return p


cdef inline Py_ssize_t _u8(object buf, Py_ssize_t pos) except -1:
    return _in(buf, pos, 1)[0]


cdef inline unsigned long long _be(const unsigned char* p, int size) noexcept:
    cdef unsigned long long v = 0
    cdef int i
    for i in range(size):
        v = (v << 8) | p[i]
    return v


cdef inline bint _bool(object buf, Py_ssize_t pos) except -1:
    return _in(buf, pos, 1)[0] != 0


cdef inline long long _i8(object buf, Py_ssize_t pos) except? -1:
    return <signed char>_in(buf, pos, 1)[0]


cdef inline long long _i16(object buf, Py_ssize_t pos) except? -1:
    return <short>_be(_in(buf, pos, 2), 2)


cdef inline long long _u16(object buf, Py_ssize_t pos) except? -1:
    return <unsigned short>_be(_in(buf, pos, 2), 2)


cdef inline long long _i32(object buf, Py_ssize_t pos) except? -1:
    return <int>_be(_in(buf, pos, 4), 4)


cdef inline long long _u32(object buf, Py_ssize_t pos) except? -1:
    return <unsigned int>_be(_in(buf, pos, 4), 4)


cdef inline long long _u32le(object buf, Py_ssize_t pos) except? -1:
    """A little-endian u32 (a classic pcap file's record header, written on a little-endian machine)."""
    cdef const unsigned char* p = _in(buf, pos, 4)
    return (<long long>p[0] | (<long long>p[1] << 8) | (<long long>p[2] << 16) | (<long long>p[3] << 24))


cdef inline long long _i64(object buf, Py_ssize_t pos) except? -1:
    return <long long>_be(_in(buf, pos, 8), 8)


cdef inline double _f64(object buf, Py_ssize_t pos) except? -1.0:
    cdef unsigned long long bits = _be(_in(buf, pos, 8), 8)
    cdef double value
    memcpy(&value, &bits, 8)
    return value


cdef inline bytes _b16(object buf, Py_ssize_t pos):
    return PyBytes_FromStringAndSize(<char*>_in(buf, pos, 16), 16)


cdef inline bytes _bytes_at(object buf, Py_ssize_t pos, Py_ssize_t stop):
    return PyBytes_FromStringAndSize(<char*>_in(buf, pos, stop - pos), stop - pos)


cdef inline str _utf8(object buf, Py_ssize_t pos, Py_ssize_t stop):
    return PyUnicode_DecodeUTF8(<char*>_in(buf, pos, stop - pos), stop - pos, "replace")


cdef inline object _view(object buf):
    """memoryview(buf) as a C call (a records field's view of a body that came as bytes)."""
    return PyMemoryView_FromObject(buf)


cdef inline bint _is_plain(object mv) noexcept:
    """Whether the memoryview mv is a plain view of bytes: one dimension of one-byte unsigned items ("B"),
    contiguous (mv.ndim == 1 and mv.itemsize == 1 and mv.c_contiguous and mv.format == "B")."""
    cdef Py_buffer* view = PyMemoryView_GET_BUFFER(mv)
    return (view.ndim == 1 and view.itemsize == 1 and (view.strides == NULL or view.strides[0] == 1)
            and (view.format == NULL or (view.format[0] == b'B' and view.format[1] == 0)))


cdef inline object _plain(object mv):
    """mv when it is a plain view of bytes (_is_plain), else a memoryview of a copy of its bytes: the reads
    above take a memoryview's memory as its bytes."""
    if _is_plain(mv):
        return mv
    return memoryview(mv.tobytes())


cdef inline tuple _v2_head(object buf, Py_ssize_t pos):
    """The 13 fields of the v2 record batch header at pos (its 61 bytes, checked in the buffer), as the struct
    ">qiibIhiqqqhii" unpacks them: base offset, batch length, leader epoch, magic, CRC, attributes, last offset
    delta, base and max timestamp, producer id and epoch, base sequence, record count."""
    cdef const unsigned char* p = _in(buf, pos, 61)
    return (<long long>_be(p, 8), <int>_be(p + 8, 4), <int>_be(p + 12, 4), <signed char>p[16],
            <unsigned int>_be(p + 17, 4), <short>_be(p + 21, 2), <int>_be(p + 23, 4), <long long>_be(p + 27, 8),
            <long long>_be(p + 35, 8), <long long>_be(p + 43, 8), <short>_be(p + 51, 2), <int>_be(p + 53, 4),
            <int>_be(p + 57, 4))


cdef inline (long long, long long, long long, Py_ssize_t) _request_head(object buf) except *:
    """A request header's first 10 bytes (checked in the buffer), as the struct ">hhih" unpacks them: api key,
    api version, correlation id and the client id's length (-1: null)."""
    cdef const unsigned char* p = _in(buf, 0, 10)
    return <short>_be(p, 2), <short>_be(p + 2, 2), <int>_be(p + 4, 4), <short>_be(p + 8, 2)


cdef inline (Py_ssize_t, Py_ssize_t, Py_ssize_t, Py_ssize_t, Py_ssize_t, Py_ssize_t, Py_ssize_t, Py_ssize_t) _ipv4_tcp(
        object buf, Py_ssize_t frame, bint ethernet) except *:
    """The fields of an IPv4 (no options) TCP packet kwire.native.fused tests, where kwire.net.layout's KEYED structs have
    them (their key aside): head, total length, fragment field, protocol, sequence and acknowledgement numbers, data
    offset byte, flags. `frame` is where its Ethernet frame starts (a raw packet's: 14 bytes before the packet),
    `ethernet` whether there is one: head is then the 32 bits at 12 (Ethernet type, version and IHL, TOS), else the
    first 16 bits of the packet. All its bytes are checked in the buffer."""
    cdef Py_ssize_t d = 0 if ethernet else 14  # where the bytes read start, from frame: q[x - d] is frame + x
    cdef const unsigned char* q = _in(buf, frame + d, 48 - d)
    return (<Py_ssize_t>_be(q + 12, 4) if ethernet else <Py_ssize_t>_be(q, 2), <Py_ssize_t>_be(q + 16 - d, 2),
            <Py_ssize_t>_be(q + 20 - d, 2), q[23 - d], <Py_ssize_t>_be(q + 38 - d, 4), <Py_ssize_t>_be(q + 42 - d, 4),
            q[46 - d], q[47 - d])
