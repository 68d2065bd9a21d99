# Cython declarations for kwire/native/kafka_connection.py (the compiled core, setup.py; the .py stays the one
# source). KafkaStream is an extension type; data() reaches its framer and pairing in C. Its counters are
# C integers (frames and bytes of one connection); everything else stays a Python object. Spark's follow
# mode pickles streams: Cython's generated pickling of extension types covers every field.

cimport cython
from kwire.native.framing cimport Framer
from kwire.native.kafka_headers cimport RequestHeader
from kwire.native.kafka_pairing cimport Pairing

cdef class KafkaStream:
    cdef public object conn, layer, emit, counters, state, reader, client_dir, roles, max_frame, client_id
    cdef public object received
    cdef public str client_id_text
    cdef public tuple framers
    cdef public Pairing pairing
    cdef public list held
    cdef public Py_ssize_t chained, scanned, frames, unparsed_frames, gaps

    @cython.locals(framer=Framer, frames=list, pairing=Pairing, count=Py_ssize_t)
    cpdef data(self, direction, ts_ns, data)
    @cython.locals(header=RequestHeader, text=str, known=str)
    cpdef _request(self, body, ts_ns, out, span=*)
