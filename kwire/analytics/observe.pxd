# Cython declarations for kwire/analytics/observe.py (the compiled core, setup.py; the .py stays the one source
# and runs as it is without Cython): the functions that read an exchange's fields on the per-exchange path take a
# kwire.model.Exchange (an extension type, compiled) and read them in C.

cimport cython
from kwire.analytics.resends cimport ResendReader
from kwire.model cimport Exchange

cpdef tuple evidence(Exchange ex)
cpdef list observations(Exchange ex, watch=*, row=*, produce=*)
cpdef _violations(Exchange ex, list out)
@cython.locals(reader=ResendReader)
cpdef _produce(Exchange ex, list out, watch=*, read=*, row=*)
cpdef _fetch(Exchange ex, list out)
