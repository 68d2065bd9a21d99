# Cython declarations for kwire/analytics/row.py (the compiled core, setup.py; the .py stays the one source and
# runs as it is without Cython): ExchangeRow is an extension type, its fields read and written in C by the
# compiled modules that cimport it (facts makes it; aggregate, analysis and traffic read it).

cdef frozenset _KNOWN

cdef class ExchangeRow:
    cdef public object ts_ns, request_ts_ns, response_ts_ns, client, broker, client_id, api_key, api
    cdef public object api_version, correlation_id, status, unanswered, latency_ms, request_bytes
    cdef public object response_bytes, error_codes, failed, request_outcome, response_outcome, request_error
    cdef public object response_error, request_trailing_bytes, response_trailing_bytes, group_id, wait
    cdef public object negotiation, connection_id, latency_ns, evidence

cpdef ExchangeRow row_of(mapping)
