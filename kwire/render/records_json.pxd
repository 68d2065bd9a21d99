# Cython declarations for kwire/render/records_json.py (the compiled core, setup.py; the .py stays the one source
# and runs as it is without Cython): a batch's header is read with kwire/native/c_reads.pxd and written into its
# text with kwire/native/c_text.pxd, in C.

cimport cython
cimport kwire.native.c_reads as c_reads
cimport kwire.native.c_text as c_text
from kwire.codec.budget cimport RecordBudget

# the module's private cache: a dict, so a look-up is a C call
cdef dict _ATTRIBUTES_JSON
cdef bytes _BATCH, _ONE


cdef bytes _attributes_json(attributes)

@cython.locals(length="long long", crc="long long", valid=bytes)
cdef bytes _batch_json(mv, Py_ssize_t pos, Py_ssize_t size)

@cython.locals(length=Py_ssize_t, magic=Py_ssize_t)
cdef Py_ssize_t _whole_v2_length(mv, Py_ssize_t pos, Py_ssize_t n) except -2

@cython.locals(n=Py_ssize_t, first=Py_ssize_t, pos=Py_ssize_t, length=Py_ssize_t, starts=list)
cpdef summary_fragment(data, RecordBudget budget)
