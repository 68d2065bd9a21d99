# Cython declarations for kwire/render/records_run.py (the compiled core, setup.py; the .py stays the one source
# and runs as it is without Cython): RecordsRun is an extension type making each exchange's RecordBudget (one
# too) in C. Its amounts stay Python ints.

from kwire.codec.budget cimport RecordBudget

cdef class RecordsRun:
    cdef public object limit, used, refused, data, entries, batches

    cpdef RecordBudget budget(self)
    cpdef charge(self, RecordBudget budget)
