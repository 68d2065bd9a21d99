# Cython declarations for kwire/native/raw_records.py (the compiled core, setup.py; the .py stays the one source and
# runs as it is without Cython): RawRecords is an extension type, so the compiled decoders (kwire.codec.aot_build)
# make one with a C call (raw_records: no Python-level call) and its readers read its bytes in C.

cdef class RawRecords:
    cdef public object data


cpdef RawRecords raw_records(object data)
