# Cython declarations for kwire/native/framing.py (the compiled core, setup.py; the .py stays the one source
# and runs as it is without Cython). Framer is an extension type (KafkaStream calls feed() in C); lengths
# read from the wire are 32-bit, and what a frame still needs is at most one frame's size, so they are C
# integers; max_frame is the caller's setting and stays a Python int. Indexing stays bounds-checked; a frame's
# length is read in C (kwire/native/c_reads.pxd, bounds-checked too).

cimport cython
cimport kwire.native.c_reads as c_reads

cdef class Framer:
    cdef public bytearray buf
    cdef public bint synced
    cdef public object max_frame, find_start, cut
    cdef public dict scan
    cdef public int direction
    cdef public Py_ssize_t frames, resyncs, skipped_bytes, absurd_lengths, need, cut_frames

    @cython.locals(need=Py_ssize_t, n=Py_ssize_t, length=Py_ssize_t, pos=Py_ssize_t, end=Py_ssize_t,
                   buf=bytearray, out=list)
    cpdef list feed(self, data)
    @cython.locals(buf=bytearray, length=Py_ssize_t, start=Py_ssize_t, drop=Py_ssize_t, scan=dict)
    cpdef list _drain(self, list out)
