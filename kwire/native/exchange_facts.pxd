# Cython declarations for kwire/native/exchange_facts.py (the compiled core, setup.py; the .py stays the one source and
# runs as it is without Cython): the functions that read an exchange's fields on the per-exchange path take a
# kwire.model.Exchange (an extension type, compiled) and read them in C.

cimport cython
from kwire.native.exchange_row cimport ExchangeRow, PartitionRow
from kwire.model cimport Exchange

# the module's private caches: dicts, so a look-up is a C call (a module attribute's .get is a Python call)
cdef dict _GROUP_TREES

cpdef tuple error_code_names(Exchange ex, found=*)
@cython.locals(row=ExchangeRow)
cpdef ExchangeRow exchange_row(Exchange ex, found=*)
@cython.locals(row=PartitionRow)
cpdef list produce_rows(ts_ns, list partitions)
cpdef ns_to_ms(ns)
