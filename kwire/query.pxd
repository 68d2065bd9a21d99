# Cython declarations for kwire/query.py (the compiled core, setup.py; the .py stays the one source and runs
# as it is without Cython): response_error_codes, read for every exchange, takes a kwire.model.Exchange
# (an extension type, compiled) and reads its fields in C.

from kwire.model cimport Exchange

cpdef list response_error_codes(Exchange ex)
