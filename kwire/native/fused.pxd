# Cython declarations for kwire/native/fused.py (the compiled core, setup.py; the .py stays the one source and
# runs as it is without Cython): the loops' locals that hold buffer offsets and lengths are C integers
# (each read from a 16- or 32-bit header field, or a position inside the buffer), the flow table and the
# direction they work on are typed, so their fields are read in C. Sequence numbers, times and what the
# consumer wants stay Python ints (None is possible, and a time may be any size).

cimport cython
cimport kwire.native.c_reads as c_reads
from kwire.native.record_walk cimport RecordSink
from kwire.native.tcp_flows cimport FlowTable
from kwire.native.tcp_reassembly cimport HalfStream

# the header layout's constants (kwire.net.layout, kwire.net.segment), read as C integers: compared with
# the typed fields below without making a Python int of them each time
cdef Py_ssize_t ETHERNET_HEADER, FRAGMENTED, IPPROTO_TCP, MIN_FRAME, MIN_RAW, PLAIN_HEAD_HI, PLAIN_HEAD_LO
cdef Py_ssize_t RAW_HEAD_HI, RAW_HEAD_LO, SLOW_FLAGS, ACK
cdef Py_ssize_t HEAD_AT, TOTAL_AT, FRAG_AT, PROTO_AT, KEY_AT, KEY_SIZE, SEQ_AT, ACK_AT, DOFF_AT, FLAGS_AT
cdef tuple SLOW_BY_FLAGS, TCP_PAYLOAD_AT

cdef class PlainFeed(RecordSink):
    cdef public object feed_packet, feed_empty, last_ts

    cpdef bint record(self, ts_ns, Py_ssize_t linktype, buf, Py_ssize_t start, Py_ssize_t stop,
                      Py_ssize_t wire_len) except -1

cdef class RecordFeed(RecordSink):
    cdef public FlowTable flows
    cdef public object feed_packet, feed_empty, last_ts

    @cython.locals(flows=FlowTable, h=HalfStream, head=Py_ssize_t, total=Py_ssize_t, frag=Py_ssize_t,
                   proto=Py_ssize_t, doff=Py_ssize_t, flags=Py_ssize_t, p=Py_ssize_t, end=Py_ssize_t,
                   frame=Py_ssize_t, head_lo=Py_ssize_t, head_hi=Py_ssize_t, held=bint)
    cpdef bint record(self, ts, Py_ssize_t linktype, buf, Py_ssize_t start, Py_ssize_t stop,
                      Py_ssize_t wire_len) except -1

@cython.locals(hsize=Py_ssize_t, last_start=Py_ssize_t, by_header=dict, payload_at=tuple,
               head_lo=Py_ssize_t, head_hi=Py_ssize_t, tcp=Py_ssize_t, fragmented=Py_ssize_t, eth=Py_ssize_t,
               taken=Py_ssize_t, h=HalfStream, found=HalfStream, acks=Py_ssize_t, last=Py_ssize_t,
               last_ack=Py_ssize_t, pieces=list, caplen=Py_ssize_t, wirelen=Py_ssize_t, start=Py_ssize_t,
               stop=Py_ssize_t, head=Py_ssize_t, total=Py_ssize_t, frag=Py_ssize_t, proto=Py_ssize_t,
               doff=Py_ssize_t, flags=Py_ssize_t, p=Py_ssize_t, n=Py_ssize_t)
cpdef tuple _record_run(FlowTable flows, buf, Py_ssize_t pos, Py_ssize_t end, layout)

@cython.locals(by_header=dict, payload_at=tuple,
               head_lo=Py_ssize_t, head_hi=Py_ssize_t, tcp=Py_ssize_t, fragmented=Py_ssize_t, eth=Py_ssize_t,
               taken=Py_ssize_t, nbytes=Py_ssize_t, h=HalfStream, found=HalfStream, acks=Py_ssize_t,
               last=Py_ssize_t, last_ack=Py_ssize_t, pieces=list, step=Py_ssize_t, caplen=Py_ssize_t,
               wirelen=Py_ssize_t, mac=Py_ssize_t, start=Py_ssize_t, stop=Py_ssize_t, following=Py_ssize_t,
               head=Py_ssize_t, total=Py_ssize_t, frag=Py_ssize_t, proto=Py_ssize_t, doff=Py_ssize_t,
               flags=Py_ssize_t, p=Py_ssize_t, n=Py_ssize_t)
cpdef tuple _frame_run(FlowTable flows, buf, Py_ssize_t pos, Py_ssize_t end, layout)

cpdef Py_ssize_t _give_back(HalfStream h, list pieces, nxt, want, Py_ssize_t acks, layout, buf, Py_ssize_t last,
                            Py_ssize_t last_ack) except -1
