# Cython declarations for kwire/pipeline.py (the compiled core, setup.py; the .py stays the one source and runs
# as it is without Cython): RunSummary is an extension type (a dataclass all the same), so counting an exchange
# reads it and the kwire.model.Exchange in C. Its counts stay Python ints. ExchangeSink, which the Kafka layer
# hands each exchange, is one too: decoding, enriching and counting an exchange are C calls from it.

cimport kwire.native.exchange_build as _exchanges
from kwire.native.exchange_enrich cimport Enricher
from kwire.native.kafka_pairing cimport RawExchange
from kwire.model cimport Exchange

cdef class RunSummary:
    cdef public object capture, net, tcp, kafka, exchanges, paired, no_response, no_request, decode_errors
    cdef public object capture_errors, unknown_linktypes, tls
    cdef public set connections
    cdef public bint keylog_given

    cpdef count(self, Exchange ex)


cdef class ExchangeSink:
    cdef public object offload
    cdef public Enricher enricher
    cdef public bint decode
    cdef public RunSummary summary
    cdef public list out

    cpdef on_raw(self, RawExchange raw)
