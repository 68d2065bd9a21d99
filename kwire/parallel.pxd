# Cython declarations for kwire/parallel.py (the compiled core, setup.py; the .py stays the one source and runs
# as it is without Cython): offloadable, asked of every exchange the main process pairs, reads the RawExchange
# and its PendingRequest (extension types, kwire/native/kafka_pairing.pxd) in C.

cimport cython
from kwire.native.kafka_headers cimport RequestHeader, version_key
from kwire.native.kafka_pairing cimport PendingRequest, RawExchange

# the module's private cache: a dict, so a look-up is a C call
cdef dict _STAYS

@cython.locals(req=PendingRequest, header=RequestHeader)
cpdef offloadable(RawExchange raw)
