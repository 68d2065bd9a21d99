# Cython declarations for kwire/native/caps.py (the compiled core, setup.py; the .py stays the one source and
# runs as it is without Cython): FoldedTable is an extension type, so the Aggregator finds a table's row for each
# exchange with a C call. It pickles by its own __reduce__, the same in both builds.

cdef class FoldedTable:
    cdef public object kind, cap, make, others_key, others
    cdef public dict rows
    cdef public list _heap

    cpdef row(self, key)
    cpdef _others(self)
