# Cython declarations for kwire/analytics/delivery.py (the compiled core, setup.py; the .py stays the one
# source and runs as it is without Cython): Batch, one per Produce batch seen, is an extension type holding
# its Kept evidence typed, so making and counting one stays in C.

from kwire.analytics.mergeable cimport Kept

cdef class Batch:
    cdef public object sends, failed
    cdef public Kept evidence
