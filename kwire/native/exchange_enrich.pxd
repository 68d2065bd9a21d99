# Cython declarations for kwire/native/exchange_enrich.py (the compiled core, setup.py; the .py stays the one source and runs
# as it is without Cython): topic_pairs and topic_label, called by compiled modules for every exchange, in C
# (a topic struct is a dict: its fields read without a method lookup); the Enricher and its plan per api and
# version are extension types, reading the Exchange in C.

cimport cython

from kwire.model cimport Exchange

# the module's private caches: dicts, so a look-up is a C call (a module attribute's .get is a Python call)
cdef dict _PLANS

cdef class _Plan:
    cdef public object request_ids, response_ids, pairs
    cdef public bint active

cpdef _Plan _plan(api_key, version)

cdef class Enricher:
    cdef public dict topic_names, fetch_offsets

    @cython.locals(plan=_Plan)
    cpdef enrich(self, Exchange ex)

cpdef list topic_pairs(api_key, version, response)
cpdef topic_label(dict topic)
