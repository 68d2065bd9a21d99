# Cython declarations for kwire/pipeline.py (the compiled core, setup.py; the .py stays the one source and runs
# as it is without Cython): RunSummary is an extension type (a dataclass all the same), so counting an exchange
# reads it and the kwire.model.Exchange in C. Its counts stay Python ints.

from kwire.model cimport Exchange

cdef class RunSummary:
    cdef public object capture, net, tcp, kafka, exchanges, paired, no_response, no_request, decode_errors
    cdef public object capture_errors, unknown_linktypes, tls
    cdef public set connections
    cdef public bint keylog_given

    cpdef count(self, Exchange ex)
