# Cython declarations for kwire/codec/records.py (the compiled core, setup.py; the .py stays the one source and
# runs as it is without Cython): the walk of a records field reads its exchange's RecordBudget (an extension
# type) in C.

from kwire.codec.budget cimport RecordBudget

cpdef dict _walk(buf, bint decode, RecordBudget budget, tally=*)
