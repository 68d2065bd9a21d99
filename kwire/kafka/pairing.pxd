# Cython declarations for kwire/kafka/pairing.py (the compiled core, setup.py; the .py stays the one
# source). Pairing is an extension type, its counters C integers (counts of one connection's requests and
# bytes); correlation ids and times stay Python ints.

cdef class Pairing:
    cdef public object conn, client_dir, kept, max_bytes
    cdef public dict pending, waiting, orphans, orphan_due
    cdef public Py_ssize_t count, kept_bytes, duplicate_correlation_ids, pending_overflow, dropped_bodies
    cdef public bint lossy

    cpdef bint request(self, header, body, ts_ns, out, span=*) except -1
    cpdef bint response(self, body, ts_ns, frames, out, span=*) except -1
