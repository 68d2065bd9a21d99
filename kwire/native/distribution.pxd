# Cython declarations for kwire/native/distribution.py (the compiled core, setup.py; the .py stays the one
# source and runs as it is without Cython): merge_into takes its distributions as dicts, so that merging one into
# another (a table's rows take every cell's at the end of a run: as many look-ups as distinct latencies) reads and
# writes them with C calls, not with a method call and a generic item assignment per latency.

cpdef merge_into(dict dist, dict other)
