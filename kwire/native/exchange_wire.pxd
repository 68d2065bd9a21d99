# Cython declarations for kwire/native/exchange_wire.py (the compiled core, setup.py; the .py stays the one source and runs
# as it is without Cython): PartsWriter is an extension type; its values are written and read in C by
# kwire/native/c_parts.pxd.

cimport cython
cimport kwire.native.exchange_build as _exchanges
cimport kwire.native.c_parts as c_parts
from kwire.native.kafka_pairing cimport PendingRequest, RawExchange


@cython.locals(request=PendingRequest)
cpdef Py_ssize_t frames_size(RawExchange raw) except -1


cdef class PartsWriter:
    cdef public bytearray buf
    cdef public Py_ssize_t size, rows, width, frame_bytes

    cpdef add(self, RawExchange raw)
    @cython.locals(buf=bytearray, size=Py_ssize_t)
    cpdef add_row(self, tuple values)
    cpdef bytes getvalue(self)
    @cython.locals(size=Py_ssize_t)
    cdef _put(self, value)
    cdef _put_sized(self, tag, data)
    cdef _append(self, data)
