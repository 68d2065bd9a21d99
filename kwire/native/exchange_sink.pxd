# Cython declarations for kwire/native/exchange_sink.py (the compiled core, setup.py; the .py stays the one source and
# runs as it is without Cython): ExchangeCounts and ExchangeSink are extension types, so that the sink's work per
# exchange (decoding, enriching and counting it) is C calls; a Python subclass of ExchangeCounts
# (kwire.pipeline.RunSummary) keeps its own fields in an instance dict. `offloadable`, asked of every exchange the
# main process pairs, reads the RawExchange and its PendingRequest in C.

cimport cython
cimport kwire.native.exchange_build as _exchanges
from kwire.native.exchange_build cimport is_malformed
from kwire.native.exchange_enrich cimport Enricher
from kwire.native.kafka_headers cimport RequestHeader, version_key
from kwire.native.kafka_pairing cimport PendingRequest, RawExchange
from kwire.model cimport Exchange

cdef class ExchangeCounts:
    cdef public object exchanges, paired, no_response, no_request, decode_errors
    cdef public set connections

    cpdef count(self, Exchange ex)
    cpdef count_status(self, status, connection_id)


cdef class ExchangeSink:
    cdef public object offload
    cdef public Enricher enricher
    cdef public bint decode
    cdef public ExchangeCounts summary
    cdef public list out

    cpdef on_raw(self, RawExchange raw)


# the module's private cache: a dict, so a look-up is a C call
cdef dict _STAYS

@cython.locals(req=PendingRequest, header=RequestHeader)
cpdef offloadable(RawExchange raw)
