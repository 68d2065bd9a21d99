# Cython declarations for kwire/exchanges.py (the compiled core, setup.py; the .py stays the one source and runs
# as it is without Cython): exchange_parts reads a pairing's RawExchange and its
# PendingRequest in C (extension types, kwire/kafka/pairing.pxd).

cimport cython
from kwire.kafka.pairing cimport PendingRequest, RawExchange

@cython.locals(req=PendingRequest)
cpdef endpoint_name(endpoint)
cpdef exchange_parts(RawExchange raw, bint owned=*)
cpdef tuple _wire(RawExchange raw, request_span)
