# Cython declarations for kwire/model.py (the compiled core, setup.py; the .py stays the one source and
# runs as it is without Cython). Compiled, Exchange is an extension type: the modules that read an
# exchange's fields on the per-exchange path (their .pxd cimport it) read them in C, not through
# Python's attribute lookup. Every field stays a Python object: None is a value of most of them.

cimport cython

cdef class Exchange:
    cdef public object connection_id, client, broker, status, correlation_id, api_key, api, api_version
    cdef public object client_id, request_ts_ns, response_ts_ns, given_up_ts_ns, request_size, response_size
    cdef public object request, response, request_outcome, response_outcome, unanswered, extra, wire


@cython.locals(ex=Exchange)  # its fields set in C
cpdef Exchange new_exchange(connection_id, client, broker, status, correlation_id, api_key, api, api_version,
                            client_id, request_ts_ns, response_ts_ns, given_up_ts_ns, request_size, response_size,
                            request, response, request_outcome, response_outcome, unanswered, extra, wire)
