# Cython declarations for kwire/render/jsonl.py (the compiled core, setup.py; the .py stays the one source and
# runs as it is without Cython): the fast line reads a kwire.model.Exchange (an extension type, compiled) in C.
# (_fast_line stays a Python function that calls it: tests replace _fast_line.)

from kwire.model cimport Exchange
from kwire.query cimport response_error_codes

cpdef _line_from_parts(Exchange ex, records, run, hook)
