# Cython declarations for kwire/native/kafka_pairing.py (the compiled core, setup.py; the .py stays the one
# source). Pairing, PendingRequest and RawExchange are extension types (pickled by Cython's generated
# code), their counters C integers (counts of one connection's requests and
# bytes); correlation ids and times stay Python ints.

cimport cython
cimport kwire.native.c_reads as c_reads
from kwire.native.kafka_headers cimport RequestHeader

@cython.locals(pos=Py_ssize_t, version=Py_ssize_t, n=Py_ssize_t)
cpdef produce_acks(RequestHeader header, body)

cdef class PendingRequest:
    cdef public object header, body, ts_ns, size, lost, span
    cdef public bint dropped, done
    cdef public Py_ssize_t held

@cython.locals(request=PendingRequest)  # its fields set in C
cdef PendingRequest _pending_request(RequestHeader header, body, ts_ns, size, span, Py_ssize_t held)

cdef class RawExchange:
    cdef public object conn, client_direction, status, correlation_id, request, response_body, response_ts_ns
    cdef public object response_size, given_up_ts_ns, response_span, unanswered, response_lost

@cython.locals(raw=RawExchange)  # its fields set in C
cdef RawExchange _paired(conn, client_direction, correlation_id, PendingRequest request, response_body, response_ts_ns,
                         response_size, response_span)

@cython.locals(n=Py_ssize_t)
cdef Py_ssize_t _past_done(list kept, Py_ssize_t head) except -1

cdef class Pairing:
    cdef public object conn, client_dir, max_bytes
    cdef public list kept
    cdef public dict pending, waiting, orphans, orphan_due
    cdef public Py_ssize_t count, kept_head, kept_bytes, duplicate_correlation_ids, pending_overflow, dropped_bodies
    cdef public bint lossy

    @cython.locals(request=PendingRequest, held=Py_ssize_t)
    cpdef bint request(self, RequestHeader header, body, ts_ns, out, span=*) except -1
    @cython.locals(request=PendingRequest)
    cpdef bint response(self, body, ts_ns, frames, out, span=*) except -1
