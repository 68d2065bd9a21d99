# A time's bucket and a dict's look-up in C, inlined by Cython where this file is cimported
# (`cimport kwire.native.c_ints as c_ints`); kwire/native/c_ints.py is the same in Python, what the pure build
# calls under the same names. For the analytics' per-exchange adds (kwire.native.mergeable, series).

from cpython.dict cimport PyDict_GetItemWithError
from cpython.long cimport PyLong_AsLongLongAndOverflow
from cpython.ref cimport PyObject


cdef inline object _time_bucket(object ts_ns, object resolution):
    """ts_ns // NS // resolution, the bucket of a time at a resolution of seconds (TimeHistograms, and
    kwire.native.series' Series): in C where both are ints of 63 bits or fewer, the time not negative
    and the resolution positive (every real time), else as Python divides (the same number)."""
    cdef int over_t = 0, over_r = 0
    cdef long long t, r
    if type(ts_ns) is int and type(resolution) is int:
        t = PyLong_AsLongLongAndOverflow(ts_ns, &over_t)
        r = PyLong_AsLongLongAndOverflow(resolution, &over_r)
        if not over_t and not over_r and t >= 0 and r > 0:
            return (t // 1000000000) // r
    return ts_ns // 1000000000 // resolution


cdef inline object _dict_get(object table, object key):
    """dict.get(table, key) of a dict or a subclass that keeps dict's look-up (Capped), as a C call."""
    cdef PyObject* found = PyDict_GetItemWithError(table, key)
    return <object>found if found != NULL else None
