# Cython declarations for kwire/capture/pcap.py (the compiled core, setup.py; the .py stays the one source
# and runs as it is without Cython): the record loop's positions and lengths are C integers (positions in
# the chunk, 32-bit lengths from the record headers and their sums over one chunk), and so is a record's time
# while it is worked out (32-bit seconds and fraction: its nanoseconds fit in 64 bits).

cimport cython
cimport kwire.native.c_reads as c_reads
from kwire.capture.packet cimport RecordSink

@cython.locals(hsize=Py_ssize_t, end=Py_ssize_t, n=Py_ssize_t, cap=Py_ssize_t, wire=Py_ssize_t, cut=Py_ssize_t,
               caplen=Py_ssize_t, wirelen=Py_ssize_t, start=Py_ssize_t, stop=Py_ssize_t, after=Py_ssize_t,
               k=Py_ssize_t, sec="long long", frac="long long", mult="long long", fast=bint, little=bint)
cpdef tuple _chunk(reader, buf, Py_ssize_t pos, base, RecordSink sink, layout, list counts,
                   Py_ssize_t until)
