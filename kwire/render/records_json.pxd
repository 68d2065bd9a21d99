# Cython declarations for kwire/render/records_json.py (the compiled core, setup.py; the .py stays the one source
# and runs as it is without Cython): a batch's header fields are C integers, read with kwire/native/c_reads.pxd and
# written into its text with kwire/native/c_text.pxd.

cimport cython
cimport kwire.native.c_reads as c_reads
from kwire.codec.budget cimport RecordBudget
from kwire.native.c_text cimport put_format

# the module's private cache: a dict, so a look-up is a C call
cdef dict _ATTRIBUTES_JSON
cdef long long _I64_MAX, _I64_MIN
cdef bytes _BATCH, _ONE
cdef Py_ssize_t TEXT_ROOM  # the size of _batch_json's out
cdef Py_ssize_t _HEADER_SIZE


cdef bytes _attributes_json(attributes)

@cython.locals(base_offset="long long", length="long long", epoch="long long", magic="long long",
               crc="long long", attributes="long long", last_delta="long long", base_ts="long long",
               max_ts="long long", producer_id="long long", producer_epoch="long long",
               base_sequence="long long", count="long long", n=Py_ssize_t, valid=bytes, attributes_text=bytes,
               numbers="long long[15]", texts="const char*[2]", out="char[1024]", p="const unsigned char*")
cdef bytes _batch_json(mv, Py_ssize_t pos, Py_ssize_t size)

@cython.locals(length=Py_ssize_t, magic=Py_ssize_t)
cdef Py_ssize_t _whole_v2_length(mv, Py_ssize_t pos, Py_ssize_t n) except -2

@cython.locals(n=Py_ssize_t, first=Py_ssize_t, pos=Py_ssize_t, length=Py_ssize_t, starts=list)
cpdef summary_fragment(data, RecordBudget budget)
