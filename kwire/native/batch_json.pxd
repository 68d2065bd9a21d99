# Cython declarations for kwire/native/batch_json.py (compiled by setup.py; the .py runs as it is without
# Cython): a batch's header is read with kwire/native/c_reads.pxd and written into its text with
# kwire/native/c_text.pxd, in C.

cimport cython
cimport kwire.native.c_reads as c_reads
cimport kwire.native.c_text as c_text

cdef bytes _BATCH, _ONE, _HEAD_PY, _TAIL
cdef dict _ATTRIBUTES

@cython.locals(length="long long", crc="long long", valid=bytes, attributes=int, text=bytes)
cdef bytes _batch_json(mv, Py_ssize_t pos, Py_ssize_t size, crc32c, attributes_json)

cdef bytes _attributes_text(int attributes, attributes_json)

@cython.locals(length=Py_ssize_t, magic=Py_ssize_t)
cdef Py_ssize_t _whole_v2_length(mv, Py_ssize_t pos, Py_ssize_t n) except -2

@cython.locals(n=Py_ssize_t, first=Py_ssize_t, pos=Py_ssize_t, length=Py_ssize_t, starts=list)
cpdef summary_text(data, listed, crc32c, attributes_json)

cpdef summary_fragment(data, budget, crc32c, attributes_json, fragment)
