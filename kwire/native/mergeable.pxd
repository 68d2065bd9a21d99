# Cython declarations for kwire/native/mergeable.py (the compiled core, setup.py; the .py stays the one
# source and runs as it is without Cython): the small states the analytics add to for every exchange
# (slots classes in the source) are extension types, their fields read and written in C by their own
# methods and by the compiled modules that cimport them. Every number stays a Python int.

cimport cython
cimport kwire.native.c_ints as c_ints
cimport kwire.native.c_text as c_text


cpdef capped_get(table, key)

# the module's private caches: dicts, so a look-up is a C call (a module attribute's .get is a Python call)
cdef dict _HEAD_CRCS, _BUCKETS

cpdef stable_hash3(a, b, c)

cdef class _Largest:
    cdef public object key

cdef class Kept:
    cdef public object limit
    cdef public list items

    cpdef add(self, tuple key, value)
    cpdef merge(self, Kept other)

cdef class Capped(dict):
    cdef public object _heap, _rank
    cdef public Py_ssize_t _synced

    cpdef bint refuses(self, key, Py_ssize_t limit) except -1


@cython.locals(heap=list, rank=object, added=Py_ssize_t)
cdef void _trim(Capped table, Py_ssize_t limit) except *


cdef class Instants:
    cdef public object limit, shift
    cdef public set buckets

    cpdef add(self, ts_ns)

cdef class TimeHistograms:
    cdef public object limit, resolution
    cdef public dict buckets

    @cython.locals(cell=list, hist=dict, labels=dict)
    cpdef add(self, ts_ns, latency_ns, label, evidence=*)
