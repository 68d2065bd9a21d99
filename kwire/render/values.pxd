# Cython declarations for kwire/render/values.py (the compiled core, setup.py; the .py stays the one source and
# runs as it is without Cython): SummaryHook, which orjson calls for every record set of `inspect --json`, is an
# extension type reading its run and budget in C, and the records value (an extension type) and its summary's
# writer are C calls.

from kwire.codec.values cimport RawRecords
from kwire.render.records_json cimport summary_fragment
from kwire.render.records_run cimport RecordsRun

cdef class SummaryHook:
    cdef public RecordsRun run
    cdef public object budget

    cpdef take_budget(self)
