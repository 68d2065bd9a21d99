# Cython declarations for kwire/native/record_walk.py (compiled by setup.py; the .py runs as it is without
# Cython): RecordSink is an extension type, so the loop calls record() in C (kwire/native/fused.pxd's sinks derive from
# it); the loop's positions and lengths are C integers (positions in the chunk, 32-bit lengths from the record
# headers and their sums over one chunk), and so is a record's time while it is worked out (32-bit seconds and
# fraction: its nanoseconds fit in 64 bits).

cimport cython
cimport kwire.native.c_reads as c_reads

cdef Py_ssize_t COPIES_BLOCK

cdef class RecordSink:
    cpdef bint record(self, ts_ns, Py_ssize_t linktype, buf, Py_ssize_t start, Py_ssize_t stop,
                      Py_ssize_t wire_len) except -1

@cython.locals(hsize=Py_ssize_t, end=Py_ssize_t, n=Py_ssize_t, cap=Py_ssize_t, wire=Py_ssize_t, cut=Py_ssize_t,
               caplen=Py_ssize_t, wirelen=Py_ssize_t, start=Py_ssize_t, stop=Py_ssize_t, after=Py_ssize_t,
               k=Py_ssize_t, sec="long long", frac="long long", mult="long long", fast=bint)
cpdef tuple pcap_chunk(reader, buf, Py_ssize_t pos, base, RecordSink sink, layout, bint little,
                       Py_ssize_t linktype, list counts, Py_ssize_t until)
