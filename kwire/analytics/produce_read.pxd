# Cython declarations for kwire/analytics/produce_read.py (the compiled core, setup.py; the .py stays the one
# source and runs as it is without Cython): read_answer takes a kwire.model.Exchange (an extension type, compiled)
# and reads its fields in C.

cimport cython
cimport kwire.native.c_reads as c_reads
from kwire.enrich cimport topic_label
from kwire.model cimport Exchange

# the module's private caches: dicts, so a look-up is a C call (a module attribute's .get is a Python call)
cdef dict _SHAPED

@cython.locals(topic=dict, part=dict)
cpdef tuple read_answer(Exchange ex)
@cython.locals(topic=dict, part=dict)
cpdef list request_partitions(request)

cdef inline tuple _v2_head(const unsigned char* p):
    """_V2_HEAD.unpack_from of the 61 bytes at p (kwire/native/c_reads.pxd's _in checked they are in the buffer)."""
    return (<long long>c_reads._be(p, 8), <int>c_reads._be(p + 8, 4), <int>c_reads._be(p + 12, 4),
            <signed char>p[16], <unsigned int>c_reads._be(p + 17, 4), <short>c_reads._be(p + 21, 2),
            <int>c_reads._be(p + 23, 4), <long long>c_reads._be(p + 27, 8), <long long>c_reads._be(p + 35, 8),
            <long long>c_reads._be(p + 43, 8), <short>c_reads._be(p + 51, 2), <int>c_reads._be(p + 53, 4),
            <int>c_reads._be(p + 57, 4))

@cython.locals(pos=Py_ssize_t, end=Py_ssize_t, size=Py_ssize_t, magic=Py_ssize_t)
cpdef tuple scan_batches(data)
