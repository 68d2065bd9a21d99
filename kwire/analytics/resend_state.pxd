# Cython declarations for kwire/analytics/resend_state.py (the compiled core, setup.py; the .py stays the one
# source and runs as it is without Cython): ResendState is an extension type, so that asking whether a Produce
# batch is to be read (once per batch of a producer that is not idempotent) is a C call reading it in C.

cdef class ResendState:
    cdef public object records, unmatched, fetched
    cdef public dict pending, newest
    cdef public list waiting, connections
    cdef public bint sampled

    cpdef bint wants(self, topic, partition, producer, client, first_ms, max_ms, ts_ns, bint failed=*) except -1
