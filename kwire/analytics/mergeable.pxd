# Cython declarations for kwire/analytics/mergeable.py (the compiled core, setup.py; the .py stays the one
# source and runs as it is without Cython): the small states the analytics add to for every exchange
# (slots classes in the source) are extension types, their fields read and written in C by their own
# methods and by the compiled modules that cimport them. Every number stays a Python int.

cimport cython
from cpython.dict cimport PyDict_GetItemWithError
from cpython.long cimport PyLong_AsLongLongAndOverflow
from cpython.ref cimport PyObject
from kwire.native.c_text cimport put_format


cdef inline object _c_time_bucket(object ts_ns, object resolution):
    """ts_ns // NS // resolution, the bucket of a time at a resolution of seconds (TimeHistograms, and
    kwire.analytics.series' Series): in C where both are ints of 63 bits or fewer, the time not negative
    and the resolution positive (every real time), else as Python divides (the same number)."""
    cdef int over_t = 0, over_r = 0
    cdef long long t, r
    if type(ts_ns) is int and type(resolution) is int:
        t = PyLong_AsLongLongAndOverflow(ts_ns, &over_t)
        r = PyLong_AsLongLongAndOverflow(resolution, &over_r)
        if not over_t and not over_r and t >= 0 and r > 0:
            return (t // 1000000000) // r
    return ts_ns // 1000000000 // resolution


cdef inline object _c_dict_get(object table, object key):
    """dict.get(table, key) of a dict or a subclass that keeps dict's look-up (Capped), as a C call."""
    cdef PyObject* found = PyDict_GetItemWithError(table, key)
    return <object>found if found != NULL else None


cpdef capped_get(table, key)

# the module's private caches: dicts, so a look-up is a C call (a module attribute's .get is a Python call)
cdef dict _HEAD_CRCS, _BUCKETS

@cython.locals(crc="long long")
cpdef stable_hash3(a, b, c)
cdef bytes _KEY_TEXT
cdef unsigned int _CRC32_TABLE[256]
@cython.locals(text="char[96]", numbers="long long[3]", texts="const char*[1]", n=Py_ssize_t, i=Py_ssize_t,
               crc="unsigned int")
cdef unsigned int _batch_key_crc(unsigned int head, bytes kind, long long x, long long y, long long z) noexcept


cdef inline long long _c_batch_key_crc(unsigned int head, object c) except -2:
    """stable_hash3's CRC of a batch's key c, ("crc" or "pid", int, int, int) with numbers of 64 bits (the shape
    stable_hash3's Python way tests), read in C; -1 when c is anything else (stable_hash3 then goes that way)."""
    cdef tuple t
    cdef int over_x = 0, over_y = 0, over_z = 0
    cdef long long x, y, z
    if type(c) is not tuple:
        return -1
    t = <tuple>c
    if len(t) != 4 or type(t[1]) is not int or type(t[2]) is not int or type(t[3]) is not int:
        return -1
    if t[0] == "pid":
        kind = b"pid"
    elif t[0] == "crc":
        kind = b"crc"
    else:
        return -1
    x = PyLong_AsLongLongAndOverflow(t[1], &over_x)
    y = PyLong_AsLongLongAndOverflow(t[2], &over_y)
    z = PyLong_AsLongLongAndOverflow(t[3], &over_z)
    if over_x or over_y or over_z:
        return -1
    return _batch_key_crc(head, kind, x, y, z)


@cython.locals(n="unsigned int", c="unsigned int")
cdef void _fill_crc32_table() noexcept


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
