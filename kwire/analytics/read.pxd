# Cython declarations for kwire/analytics/read.py (the compiled core, setup.py; the .py stays the one source and
# runs as it is without Cython): read_exchange takes a kwire.model.Exchange (an extension type, compiled) and
# reads its fields in C; the readers it calls are called in C.

from kwire.native.exchange_facts cimport exchange_row, produce_rows
from kwire.analytics.observe cimport observations
from kwire.native.exchange_produce cimport read_answer, request_partitions
from kwire.native.exchange_enrich cimport topic_pairs
from kwire.model cimport Exchange

cpdef tuple read_exchange(Exchange ex, watch=*)
cpdef tuple _produce(Exchange ex, watch)
