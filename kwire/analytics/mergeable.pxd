# Cython declarations for kwire/analytics/mergeable.py (the compiled core, setup.py; the .py stays the one
# source and runs as it is without Cython): the small states the analytics add to for every exchange
# (slots classes in the source) are extension types, their fields read and written in C by their own
# methods and by the compiled modules that cimport them. Every number stays a Python int.

cimport cython
from kwire.c_text cimport put_format


# the module's private caches: dicts, so a look-up is a C call (a module attribute's .get is a Python call)
cdef dict _HEAD_CRCS, _BUCKETS

cpdef stable_hash3(a, b, c)
cdef bytes _KEY_TEXT
cdef unsigned int _CRC32_TABLE[256]
@cython.locals(text="char[96]", numbers="long long[3]", texts="const char*[1]", n=Py_ssize_t, i=Py_ssize_t,
               crc="unsigned int")
cdef unsigned int _batch_key_crc(unsigned int head, bytes kind, long long x, long long y, long long z) noexcept
@cython.locals(n="unsigned int", c="unsigned int")
cdef void _fill_crc32_table() noexcept


cdef class _Largest:
    cdef public object key

cdef class Kept:
    cdef public object limit
    cdef public list items

    cpdef add(self, tuple key, value)
    cpdef merge(self, Kept other)

cdef class Instants:
    cdef public object limit, shift
    cdef public set buckets

    cpdef add(self, ts_ns)

cdef class TimeHistograms:
    cdef public object limit, resolution
    cdef public dict buckets

    @cython.locals(cell=list, hist=dict, labels=dict)
    cpdef add(self, ts_ns, latency_ns, label, evidence=*)
