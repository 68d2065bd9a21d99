# Cython declarations for kwire/analytics/figures.py (the compiled core, setup.py; the .py stays the one source
# and runs as it is without Cython): Figures and PartitionFigures are extension types, their counters read and
# written in C by their own methods. Every count stays a Python int.

cimport cython
from kwire.native.exchange_row cimport ExchangeRow, PartitionRow, row_of
from kwire.native.series cimport Series

cdef class Figures:
    cdef public object exchanges, paired, no_response, no_request, request_bytes, response_bytes, failed
    cdef public object decode_errors, errors, latency, negotiations, waits, bodies, unanswered

cdef class PartitionFigures:
    cdef public object fetches, fetch_bytes, fetch_records, produces, produce_bytes, produce_records
    cdef public object lag_samples, lag_last, lag_max, share_bytes, share_records, acquired, redelivered, acks
    cdef public Series lag_series

    cpdef add(self, PartitionRow row)

@cython.locals(row=ExchangeRow)
cpdef add_row(figures, object given)
