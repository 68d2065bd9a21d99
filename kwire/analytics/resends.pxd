# Cython declarations for kwire/analytics/resends.py (the compiled core, setup.py; the .py stays the one source
# and runs as it is without Cython): ResendReader is an extension type holding its kwire.model.Exchange
# (an extension type, compiled) typed, so both are read in C for every batch it is handed.

from kwire.analytics.resend_state cimport ResendState
from kwire.model cimport Exchange

cdef class ResendReader:
    cdef public Exchange ex
    cdef public ResendState watch
    cdef public object producer, answers

    cpdef batch(self, label, index, bint failed, data, pos, tuple head, list out)
