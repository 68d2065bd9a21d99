# Cython declarations for kwire/native/tcp_flows.py (the compiled core, setup.py; the .py stays the one source).
# FlowTable is an extension type so that kwire.native.fused reads by_header and next_sweep, and established_at()
# reads and writes the HalfStream's fields, in C. Times, sequence numbers and settings stay Python ints.

cimport cython
from kwire.native.tcp_reassembly cimport HalfStream

cdef class _Flow:
    cdef public object key, conn, halves, tuples

cdef class FlowTable:
    cdef public object open_stream, max_buffer, idle_timeout_ns, max_connections, linger_ns, sweep_interval_ns
    cdef public dict _halves, by_header, _flows, _closed, _retired, _table, _loose_fins
    cdef public object next_sweep, _next_id, _lost

    @cython.locals(peer=HalfStream, pn=object)
    cpdef established(self, HalfStream h, ts, payload, seq, ack, Py_ssize_t flags)
    @cython.locals(peer=HalfStream, pn=object, n=Py_ssize_t)
    cpdef bint established_at(self, HalfStream h, ts, buf, Py_ssize_t p, Py_ssize_t end, seq, ack,
                              Py_ssize_t flags) except -1

cdef Py_ssize_t ACK  # kwire.net.segment's flag, a C integer: established_at() tests the typed flags with it
