# Cython declarations for kwire/native/series.py (the compiled core, setup.py; the .py stays the one source
# and runs as it is without Cython): Series is an extension type, its fields read in C by its own methods
# (the timeline adds to one for every exchange). Every number stays a Python int.

cimport cython
cimport kwire.native.c_ints as c_ints


cdef class Series:
    cdef public object ops, limit, resolution
    cdef public dict buckets

    @cython.locals(cell=list)
    cpdef add_sums4(self, ts_ns, a, b, c, d)
