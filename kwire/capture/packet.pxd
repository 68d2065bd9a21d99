# Cython declarations for kwire/capture/packet.py (the compiled core, setup.py; the .py stays the one source
# and runs as it is without Cython): RecordSink, what a capture reader hands its records to, is an extension
# type, so a reader's loop that types its sink (kwire/capture/pcap.pxd) calls record() in C; the fast path's
# sinks (kwire/fused.pxd) are extension types deriving from it.

cdef class RecordSink:
    cpdef bint record(self, ts_ns, Py_ssize_t linktype, buf, Py_ssize_t start, Py_ssize_t stop,
                      Py_ssize_t wire_len) except -1
