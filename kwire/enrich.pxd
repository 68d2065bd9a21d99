# Cython declarations for kwire/enrich.py (the compiled core, setup.py; the .py stays the one source and runs
# as it is without Cython): topic_pairs, called by compiled modules for every exchange, in C.

cpdef list topic_pairs(api_key, version, response)
