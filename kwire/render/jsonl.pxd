# Cython declarations for kwire/render/jsonl.py (the compiled core, setup.py; the .py stays the one source and
# runs as it is without Cython): the fast line reads a kwire.model.Exchange (an extension type, compiled) in C.
# (_fast_line stays a Python function that calls it: tests replace _fast_line.) JsonLines, the renderer, is an
# extension type holding its run and summary hook typed.

from kwire.model cimport Exchange
from kwire.render.records_run cimport RecordsRun
from kwire.render.values cimport SummaryHook
from kwire.query cimport response_error_codes

cpdef _line_from_parts(Exchange ex, records, RecordsRun run, SummaryHook hook)

cdef class JsonLines:
    cdef public object records, show_secrets, keep
    cdef public RecordsRun run
    cdef public SummaryHook hook
