# Cython declarations for kwire/native/tcp_reassembly.py (the compiled core, setup.py; the .py stays the one
# source and runs as it is without Cython). HalfStream is an extension type: its fields are read in C by
# the code that knows the type (kwire.native.tcp_flows, kwire.native.fused). C integers only where the range is bounded:
# the counters (bytes and segments of one capture), the direction, and byte counts below a frame's size;
# sequence numbers (None before a start), times and the consumer's answer stay Python objects.

from kwire.native.tcp_outoforder cimport OutOfOrder

cdef class HalfStream(OutOfOrder):
    cdef public object conn, open_stream, stream, limit
    cdef public HalfStream peer
    cdef public int direction
    cdef public object nxt, start, syn_seq, fin_at, tail, lost_at, last_ts, ack_hole, base, held_ts, want
    cdef public bint clean
    cdef public Py_ssize_t ack_due, close_due, buffered
    cdef public list starts, chunks, held
    cdef public Py_ssize_t segments, bytes, retransmitted_bytes, conflicting_bytes, out_of_order_segments
    cdef public Py_ssize_t gaps, gap_bytes, buffer_limit_hits, pre_start_segments, pre_start_bytes
    cdef public Py_ssize_t truncated_segments, after_fin_segments

    cpdef hold(self, payload, ts)
    cpdef run_from(self)
    cpdef held_run(self, list pieces, nxt, want, ts, Py_ssize_t acks, ack_ts)
    cpdef counted(self, Py_ssize_t segments, ts)
