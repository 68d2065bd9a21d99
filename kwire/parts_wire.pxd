# Cython declarations for kwire/parts_wire.py (the compiled core, setup.py; the .py stays the one source and runs
# as it is without Cython), and the C that its compiled branches call: a value written into the batch's
# bytearray, and a whole batch read back into tuples, in the format the module's docstring gives (little-endian,
# written byte by byte: the same bytes on any machine). A read never leaves the data: every size is checked
# against what is left, and anything else raises ValueError.

cimport cython
cimport kwire.exchanges as _exchanges
from cpython.buffer cimport PyBUF_SIMPLE, PyBuffer_Release, PyObject_GetBuffer
from cpython.bytearray cimport PyByteArray_AS_STRING, PyByteArray_GET_SIZE, PyByteArray_Resize
from cpython.bytes cimport PyBytes_FromStringAndSize
from cpython.long cimport PyLong_AsLongLongAndOverflow, PyLong_FromLongLong
from cpython.ref cimport Py_INCREF
from cpython.tuple cimport PyTuple_New, PyTuple_SET_ITEM
from cpython.unicode cimport PyUnicode_AsUTF8AndSize, PyUnicode_DecodeUTF8
from libc.string cimport memcpy
from kwire.kafka.pairing cimport PendingRequest, RawExchange


@cython.locals(request=PendingRequest)
cpdef Py_ssize_t frames_size(RawExchange raw) except -1


cdef class PartsWriter:
    cdef public bytearray buf
    cdef public Py_ssize_t size, rows, width, frame_bytes

    cpdef add(self, RawExchange raw)
    cpdef add_row(self, tuple values)
    cpdef bytes getvalue(self)
    cdef _put(self, value)
    cdef _put_sized(self, tag, data)
    cdef _append(self, data)


cdef inline unsigned char* _room(PartsWriter w, Py_ssize_t size) except NULL:
    """`size` more bytes after those packed, to write (counted as packed)."""
    cdef Py_ssize_t have = PyByteArray_GET_SIZE(w.buf)
    if w.size + size > have:  # room for this and as much again: a batch grows by doubling, not by reallocs
        PyByteArray_Resize(w.buf, 2 * (w.size + size))
    cdef unsigned char* at = <unsigned char*>PyByteArray_AS_STRING(w.buf) + w.size
    w.size += size
    return at


cdef inline void _put_u32(unsigned char* at, unsigned long long v) noexcept:
    at[0], at[1], at[2], at[3] = v & 0xFF, (v >> 8) & 0xFF, (v >> 16) & 0xFF, (v >> 24) & 0xFF


cdef inline int _put_sized_c(PartsWriter w, unsigned char tag, const char* data, Py_ssize_t size) except -1:
    cdef unsigned char* at = _room(w, 5 + size)
    at[0] = tag
    _put_u32(at + 1, <unsigned long long>size)
    memcpy(at + 5, data, size)
    return 0


cdef inline bint put_int(PartsWriter w, value) except -1:
    """value (an int) as INT; False when it is past 64 bits (nothing written)."""
    cdef int overflow = 0
    cdef long long v = PyLong_AsLongLongAndOverflow(value, &overflow)
    if overflow:
        return False
    cdef unsigned long long u = <unsigned long long>v
    cdef unsigned char* at = _room(w, 9)
    cdef int i
    at[0] = 1  # INT
    for i in range(8):
        at[1 + i] = (u >> (8 * i)) & 0xFF
    return True


cdef inline bint put_text(PartsWriter w, value) except -1:
    """value (a str) as TEXT; False when it is not valid UTF-8 (a lone surrogate: nothing written)."""
    cdef Py_ssize_t size
    cdef const char* data
    try:
        data = PyUnicode_AsUTF8AndSize(value, &size)
    except UnicodeEncodeError:
        return False
    if size > 0xFFFFFFFF:
        return False
    _put_sized_c(w, 2, data, size)  # TEXT
    return True


cdef inline bint put_bytes(PartsWriter w, value) except -1:
    """value's buffer as BYTES; False when it is not one run of bytes (nothing written)."""
    cdef Py_buffer view
    try:
        PyObject_GetBuffer(value, &view, PyBUF_SIMPLE)
    except BufferError:
        return False
    try:
        if view.len > 0xFFFFFFFF:
            return False
        _put_sized_c(w, 3, <const char*>view.buf, view.len)  # BYTES
    finally:
        PyBuffer_Release(&view)
    return True


cdef inline unsigned long long _u32_at(const unsigned char* at) noexcept:
    return (<unsigned long long>at[0] | (<unsigned long long>at[1] << 8) | (<unsigned long long>at[2] << 16)
            | (<unsigned long long>at[3] << 24))


cdef inline list unpack_c(data):
    """unpack, in C: the rows of a packed batch."""
    cdef Py_buffer view
    PyObject_GetBuffer(data, &view, PyBUF_SIMPLE)
    try:
        return _rows(<const unsigned char*>view.buf, view.len)
    finally:
        PyBuffer_Release(&view)


cdef inline list _rows(const unsigned char* p, Py_ssize_t end):
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
                    value = _unpickled(PyBytes_FromStringAndSize(<const char*>(p + pos), <Py_ssize_t>size))
                pos += <Py_ssize_t>size
            else:
                raise ValueError(f"packed exchange parts: a value of kind {tag}")
            Py_INCREF(value)
            PyTuple_SET_ITEM(row, i, value)
        rows.append(row)
    if pos != end:
        raise ValueError(f"packed exchange parts: {end - pos} bytes after the last row")
    return rows


cdef object _unpickled(data)
