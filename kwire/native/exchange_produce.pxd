# Cython declarations for kwire/native/exchange_produce.py (the compiled core, setup.py; the .py stays the one
# source and runs as it is without Cython): read_answer takes a kwire.model.Exchange (an extension type, compiled)
# and reads its fields in C.

cimport cython
cimport kwire.native.c_reads as c_reads
from kwire.native.exchange_enrich cimport topic_label
from kwire.model cimport Exchange

# the module's private caches: dicts, so a look-up is a C call (a module attribute's .get is a Python call)
cdef dict _SHAPED

@cython.locals(topic=dict, part=dict)
cpdef tuple read_answer(Exchange ex)
@cython.locals(topic=dict, part=dict)
cpdef list request_partitions(request)

@cython.locals(pos=Py_ssize_t, end=Py_ssize_t, size=Py_ssize_t, magic=Py_ssize_t)
cpdef tuple scan_batches(data)
