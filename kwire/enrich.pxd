# Cython declarations for kwire/enrich.py (the compiled core, setup.py; the .py stays the one source and runs
# as it is without Cython): topic_pairs and topic_label, called by compiled modules for every exchange, in C
# (a topic struct is a dict: its fields read without a method lookup).

cpdef list topic_pairs(api_key, version, response)
cpdef topic_label(dict topic)
