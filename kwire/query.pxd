# Cython declarations for kwire/query.py (the compiled core, setup.py; the .py stays the one source and runs
# as it is without Cython): response_error_codes, read for every exchange, takes a kwire.model.Exchange
# (an extension type, compiled) and reads its fields in C; its walk along the schema's paths is C calls.

from kwire.model cimport Exchange

# the module's private caches and marks: a dict look-up is a C call, a mark compared in C
cdef dict _ERROR_TREES
cdef tuple _UNSEEN, _LEAF

cpdef list response_error_codes(Exchange ex)
cdef int _tree_codes(dict node, tuple tree, list out) except -1
