# The exchange parts' wire format (kwire.native.exchange_wire) written and read in C, inlined by Cython where this file is
# cimported (`cimport kwire.native.c_parts as c_parts`); kwire/native/c_parts.py is the same in Python, what the
# pure build runs under the same names. Little-endian, written byte by byte: the same bytes on any machine. A
# writer takes the batch's bytearray and the bytes packed in it (the bytearray may hold room past them) and
# returns the bytes packed after the value, -1 when it wrote nothing (the caller writes the value its other way);
# a read never leaves the data: every size is checked against what is left, and anything else raises ValueError.

from cpython.buffer cimport PyBUF_SIMPLE, PyBuffer_Release, PyObject_GetBuffer
from cpython.bytearray cimport PyByteArray_AS_STRING, PyByteArray_GET_SIZE, PyByteArray_Resize
from cpython.bytes cimport PyBytes_FromStringAndSize
from cpython.long cimport PyLong_AsLongLongAndOverflow, PyLong_FromLongLong
from cpython.ref cimport Py_INCREF
from cpython.tuple cimport PyTuple_New, PyTuple_SET_ITEM
from cpython.unicode cimport PyUnicode_AsUTF8AndSize, PyUnicode_DecodeUTF8
from libc.string cimport memcpy


cdef inline unsigned char* _room(bytearray buf, Py_ssize_t packed, Py_ssize_t size) except NULL:
    """Room for `size` more bytes after the `packed` ones of buf, to write (the caller counts them packed)."""
    cdef Py_ssize_t have = PyByteArray_GET_SIZE(buf)
    if packed + size > have:  # room for this and as much again: a batch grows by doubling, not by reallocs
        PyByteArray_Resize(buf, 2 * (packed + size))
    return <unsigned char*>PyByteArray_AS_STRING(buf) + packed


cdef inline void _put_u32(unsigned char* at, unsigned long long v) noexcept:
    at[0], at[1], at[2], at[3] = v & 0xFF, (v >> 8) & 0xFF, (v >> 16) & 0xFF, (v >> 24) & 0xFF


cdef inline Py_ssize_t _put_sized_c(bytearray buf, Py_ssize_t packed, unsigned char tag, const char* data,
                                    Py_ssize_t size) except -1:
    cdef unsigned char* at = _room(buf, packed, 5 + size)
    at[0] = tag
    _put_u32(at + 1, <unsigned long long>size)
    memcpy(at + 5, data, size)
    return packed + 5 + size


cdef inline Py_ssize_t _put_none(bytearray buf, Py_ssize_t packed) except -2:
    """None as NONE; the bytes packed after it."""
    _room(buf, packed, 1)[0] = 0  # NONE
    return packed + 1


cdef inline Py_ssize_t _put_int(bytearray buf, Py_ssize_t packed, value) except -2:
    """value (an int) as INT; the bytes packed after it, -1 when it is past 64 bits (nothing written)."""
    cdef int overflow = 0
    cdef long long v = PyLong_AsLongLongAndOverflow(value, &overflow)
    if overflow:
        return -1
    cdef unsigned long long u = <unsigned long long>v
    cdef unsigned char* at = _room(buf, packed, 9)
    cdef int i
    at[0] = 1  # INT
    for i in range(8):
        at[1 + i] = (u >> (8 * i)) & 0xFF
    return packed + 9


cdef inline Py_ssize_t _put_text(bytearray buf, Py_ssize_t packed, value) except -2:
    """value (a str) as TEXT; the bytes packed after it, -1 when it is not valid UTF-8 (a lone surrogate) or past
    a u32 (nothing written)."""
    cdef Py_ssize_t size
    cdef const char* data
    try:
        data = PyUnicode_AsUTF8AndSize(value, &size)
    except UnicodeEncodeError:
        return -1
    if size > 0xFFFFFFFF:
        return -1
    return _put_sized_c(buf, packed, 2, data, size)  # TEXT


cdef inline Py_ssize_t _put_bytes(bytearray buf, Py_ssize_t packed, value) except -2:
    """value's buffer as BYTES; the bytes packed after it, -1 when it is not one run of bytes or past a u32
    (nothing written)."""
    cdef Py_buffer view
    try:
        PyObject_GetBuffer(value, &view, PyBUF_SIMPLE)
    except BufferError:
        return -1
    try:
        if view.len > 0xFFFFFFFF:
            return -1
        return _put_sized_c(buf, packed, 3, <const char*>view.buf, view.len)  # BYTES
    finally:
        PyBuffer_Release(&view)


cdef inline unsigned long long _u32_at(const unsigned char* at) noexcept:
    return (<unsigned long long>at[0] | (<unsigned long long>at[1] << 8) | (<unsigned long long>at[2] << 16)
            | (<unsigned long long>at[3] << 24))


cdef inline list _unpack(data, unpickled):
    """The rows of a packed batch (`unpickled(bytes)` makes a PICKLED value)."""
    cdef Py_buffer view
    PyObject_GetBuffer(data, &view, PyBUF_SIMPLE)
    try:
        return _rows(<const unsigned char*>view.buf, view.len, unpickled)
    finally:
        PyBuffer_Release(&view)


cdef inline list _rows(const unsigned char* p, Py_ssize_t end, unpickled):
    cdef Py_ssize_t pos = 5, count, width, r, i
    cdef unsigned long long u, size
    cdef unsigned char tag
    cdef int k
    cdef object value
    cdef tuple row
    cdef list rows = []
    if end < 5:
        raise ValueError("packed exchange parts: shorter than their head")
    count, width = <Py_ssize_t>_u32_at(p), p[4]
    if count and not width:  # PartsWriter never writes it: rows of nothing, as many as the head says
        raise ValueError("packed exchange parts: rows of no values")
    for r in range(count):
        row = PyTuple_New(width)
        for i in range(width):
            if pos >= end:
                raise ValueError("packed exchange parts: cut short")
            tag = p[pos]
            pos += 1
            if tag == 0:  # NONE
                value = None
            elif tag == 1:  # INT
                if end - pos < 8:
                    raise ValueError("packed exchange parts: cut short")
                u = 0
                for k in range(8):
                    u |= (<unsigned long long>p[pos + k]) << (8 * k)
                value = PyLong_FromLongLong(<long long>u)
                pos += 8
            elif tag == 2 or tag == 3 or tag == 4:  # TEXT, BYTES, PICKLED
                if end - pos < 4:
                    raise ValueError("packed exchange parts: cut short")
                size = _u32_at(p + pos)
                pos += 4
                if size > <unsigned long long>(end - pos):
                    raise ValueError("packed exchange parts: cut short")
                if tag == 2:
                    value = PyUnicode_DecodeUTF8(<const char*>(p + pos), <Py_ssize_t>size, NULL)
                elif tag == 3:
                    value = PyBytes_FromStringAndSize(<const char*>(p + pos), <Py_ssize_t>size)
                else:
                    value = unpickled(PyBytes_FromStringAndSize(<const char*>(p + pos), <Py_ssize_t>size))
                pos += <Py_ssize_t>size
            else:
                raise ValueError(f"packed exchange parts: a value of kind {tag}")
            Py_INCREF(value)
            PyTuple_SET_ITEM(row, i, value)
        rows.append(row)
    if pos != end:
        raise ValueError(f"packed exchange parts: {end - pos} bytes after the last row")
    return rows
