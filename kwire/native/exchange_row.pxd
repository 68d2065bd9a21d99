# Cython declarations for kwire/native/exchange_row.py (the compiled core, setup.py; the .py stays the one source and
# runs as it is without Cython): ExchangeRow and PartitionRow are extension types, their fields written and read
# in C by the compiled modules that cimport them (facts makes them; aggregate, analysis, traffic and figures
# read them).

cdef frozenset _KNOWN

cdef class FieldRow:
    pass

cdef class ExchangeRow(FieldRow):
    cdef public object ts_ns, request_ts_ns, response_ts_ns, client, broker, client_id, api_key, api
    cdef public object api_version, correlation_id, status, unanswered, latency_ms, request_bytes
    cdef public object response_bytes, error_codes, failed, request_outcome, response_outcome, request_error
    cdef public object response_error, request_trailing_bytes, response_trailing_bytes, group_id, wait
    cdef public object negotiation, connection_id, latency_ns, evidence

cdef class PartitionRow(FieldRow):
    cdef public object ts_ns, api, group_id, topic, partition, bytes, records, fetch_offset, high_watermark, lag
    cdef public object acquired, redelivered, ack_gap, ack_accept, ack_release, ack_reject, ack_renew

cpdef ExchangeRow row_of(mapping)
