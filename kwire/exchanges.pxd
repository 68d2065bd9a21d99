# Cython declarations for kwire/exchanges.py (the compiled core, setup.py; the .py stays the one source and runs
# as it is without Cython): exchange_parts reads a pairing's RawExchange and its PendingRequest in C (extension
# types, kwire/kafka/pairing.pxd); build_from_parts reads the plan of its api and version (an extension type) in
# C.

cimport cython
from kwire.kafka.pairing cimport PendingRequest, RawExchange

# the module's private caches: dicts, so a look-up is a C call (a module attribute's .get is a Python call)
cdef dict _ENDPOINT_NAMES, _PLANS

cpdef endpoint_name(endpoint)
@cython.locals(req=PendingRequest)
cpdef exchange_parts(RawExchange raw, bint owned=*)
cpdef tuple _wire(RawExchange raw, request_span)

cdef class _Plan:
    cdef public object name, request, response
    cdef public bint flexible_header, embedded

@cython.locals(plan=_Plan)
cpdef build_from_parts(parts, bint decode=*)
cpdef tuple _decode_response(_Plan plan, api_key, version, body)
