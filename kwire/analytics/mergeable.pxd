# Cython declarations for kwire/analytics/mergeable.py (the compiled core, setup.py; the .py stays the one
# source and runs as it is without Cython): the small states the analytics add to for every exchange
# (slots classes in the source) are extension types, their fields read and written in C by their own
# methods and by the compiled modules that cimport them. Every number stays a Python int.

cdef class _Largest:
    cdef public object key

cdef class Kept:
    cdef public object limit
    cdef public list items

cdef class Instants:
    cdef public object limit, shift
    cdef public set buckets

cdef class TimeHistograms:
    cdef public object limit, resolution
    cdef public dict buckets
