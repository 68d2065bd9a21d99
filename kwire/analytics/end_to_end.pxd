# Cython declarations for kwire/analytics/end_to_end.py (the compiled core, setup.py; the .py stays the one source
# and runs as it is without Cython): EndToEndState is an extension type, so kwire.analytics.analysis hands it each
# Produce partition written (add_write) in C.

cdef class EndToEndState:
    cdef public dict packed, idle
    cdef public tuple last_key
    cdef public object last_kept
    cdef public list reads
    cdef public long long write_count, writes_seen, reads_seen
    cdef public object write_limit, read_limit, idle_limit, idle_folded

    cpdef add_write(self, tuple ob)
    cpdef add_read(self, tuple ob)
