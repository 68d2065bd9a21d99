# Cython declarations for kwire/native/exchange_build.py (the compiled core, setup.py; the .py stays the one source and runs
# as it is without Cython): exchange_parts reads a pairing's RawExchange and its PendingRequest in C (extension
# types, kwire/native/kafka_pairing.pxd); _build reads the plan of its api and version (an extension type) in C,
# and its parts, a plain tuple, item by item (an ExchangeParts, a tuple of a subclass, is copied into one first).

cimport cython
from kwire.native.kafka_headers cimport RequestHeader
from kwire.native.kafka_pairing cimport PendingRequest, RawExchange
from kwire.model cimport Exchange, new_exchange

# the module's private caches: dicts, so a look-up is a C call (a module attribute's .get is a Python call)
cdef dict _PLANS

cpdef exchange_parts(RawExchange raw, bint owned=*)
@cython.locals(req=PendingRequest, header=RequestHeader)
cpdef tuple _plain_parts(RawExchange raw, bint owned)
cpdef tuple _wire(RawExchange raw, request_span)

cdef class _Plan:
    cdef public object name, request, response
    cdef public bint flexible_header, embedded

cpdef build_from_parts(parts, bint decode=*)
@cython.locals(plan=_Plan)
cpdef _build(tuple parts, bint decode)
cpdef tuple _decode_response(_Plan plan, api_key, version, body)
cpdef bint is_malformed(Exchange ex)
