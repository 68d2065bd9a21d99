# Cython declarations for kwire/native/codec_records.py (the compiled core, setup.py; the .py stays the one source and
# runs as it is without Cython): the walk of a records field reads its exchange's RecordBudget (an extension
# type) in C, and makes a v2 batch's summary with C calls.

cimport cython
from kwire.native.codec_budget cimport RecordBudget

# the module's private caches: dicts, so a look-up is a C call (a module attribute's .get is a Python call)
cdef dict _ATTRIBUTES

cpdef dict _walk(buf, bint decode, RecordBudget budget, tally=*)
cpdef dict v2_attributes(attributes)
@cython.locals(length=Py_ssize_t)
cpdef dict _v2_summary(mv, Py_ssize_t pos)
