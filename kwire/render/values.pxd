# Cython declarations for kwire/render/values.py (the compiled core, setup.py; the .py stays the one source and
# runs as it is without Cython): SummaryHook, which orjson calls for every record set of `inspect --json`, is an
# extension type reading its run and budget in C.

from kwire.render.records_run cimport RecordsRun

cdef class SummaryHook:
    cdef public RecordsRun run
    cdef public object budget
