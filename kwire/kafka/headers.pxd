# Cython declarations for kwire/kafka/headers.py (the compiled core, setup.py; the .py stays the one source
# and runs as it is without Cython): a request header's sizes and offsets are C integers (read from its
# 16-bit fields, or positions inside the frame body); the api key, version and correlation id stay Python ints.

cimport cython
cimport kwire.c_reads as c_reads

# the module's private caches: dicts, so a look-up is a C call (a module attribute's .get is a Python call)
cdef dict _HEADER_VERSIONS

@cython.locals(size=Py_ssize_t, n=Py_ssize_t, hv=Py_ssize_t, pos=Py_ssize_t)
cpdef parse_request_header(body)
