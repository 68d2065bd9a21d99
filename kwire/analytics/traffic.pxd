# Cython declarations for kwire/analytics/traffic.py (the compiled core, setup.py; the .py stays the one source
# and runs as it is without Cython): TrafficState and its per-connection Connection are extension types, so
# add_row (once per exchange) reads and writes them, the row and its latency histograms in C. Every number
# stays a Python int.

cimport cython
from kwire.native.caps cimport FoldedTable
from kwire.native.mergeable cimport Kept, TimeHistograms, capped_get
from kwire.native.exchange_row cimport ExchangeRow, row_of

cdef class Connection:
    cdef public object first_ns, last_ns, exchanges, last, answered_ns, client_id, software, fetched, answers
    cdef public dict used
    cdef public Kept order

cdef int _version_used(Connection conn, ExchangeRow row, object ts) except -1
@cython.locals(items=list)
cdef int _answer_order(Connection conn, ExchangeRow row, object ts) except -1

cdef class TrafficState:
    cdef public object connections, activity
    cdef public dict errors, throttles, violations
    cdef public FoldedTable latency
    cdef public Kept unanswered, silencing

    @cython.locals(conn=Connection, series=TimeHistograms, row=ExchangeRow)
    cpdef add_row(self, object given, bint acks0=*)
