# Cython declarations for kwire/native/kafka_headers.py (the compiled core, setup.py; the .py stays the one source
# and runs as it is without Cython): a request header's sizes and offsets are C integers (read from its
# 16-bit fields, or positions inside the frame body); the api key, version and correlation id stay Python ints.
# RequestHeader is an extension type, so that the pairing and the main process's offloading read its fields in C.

cimport cython
cimport kwire.native.c_reads as c_reads

# the module's private caches: dicts, so a look-up is a C call (a module attribute's .get is a Python call)
cdef dict _HEADER_VERSIONS

cdef class RequestHeader:
    cdef public object api_key, api_version, correlation_id, client_id, header_size, tagged

@cython.locals(header=RequestHeader)  # its fields set in C
cdef RequestHeader _request_header(api_key, api_version, correlation_id, client_id, header_size, tagged)

cpdef version_key(api_key, api_version)
cpdef tuple header_versions(api_key, api_version)

@cython.locals(size=Py_ssize_t, n=Py_ssize_t, hv=Py_ssize_t, pos=Py_ssize_t)
cpdef parse_request_header(body)
