# Cython declarations for kwire/native/codec_budget.py (the compiled core, setup.py; the .py stays the one source and
# runs as it is without Cython): RecordBudget, one per exchange with record sets, is an extension type, so it
# is made, and read by the record walkers that cimport it, in C. Its amounts stay Python ints.

cdef class RecordBudget:
    cdef public object data, entries, batches, decompressed, limits
    cdef public bint run_open, gated
