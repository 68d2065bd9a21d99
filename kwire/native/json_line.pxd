# Cython declarations for kwire/native/json_line.py (compiled by setup.py; the .py runs as it is without
# Cython): LineWriter is an extension type holding its caches and functions typed; the exchange's fields are
# read by name (no other module's declarations are cimported).

cimport cython
cimport kwire.native.batch_json as batch_json

cdef list _EMPTY
cdef tuple _BYTES

cdef class LineWriter:
    cdef public object dumps, parts_of, outcomes_of, decoded, decoded_pair, error_codes, errors_of
    cdef public long options
    cdef public dict parts

    @cython.locals(seconds=double)
    cpdef line(self, ex, default, hook, run, budget)


cdef class RecordsHook:
    cdef public object run, budget, records_type, summarize, crc32c, attributes_json, fragment

    cpdef take_budget(self)


cdef class LineRenderer:
    cdef public object writer, hook, run, keep, secret_apis, safe


cdef class RunBudgets:
    cdef public object make, limit, used, refused, data, entries, batches

    cpdef budget(self)
    cpdef charge(self, budget)
