"""kwire's native code, in one place: what runs compiled, and its pure-Python reference beside it.

Today it holds what every compiled module of kwire shares: `c_reads` (big-endian numbers, a byte, UTF-8 text
and a run of bytes read from a buffer, bounds-checked: c_reads.pxd's inline C compiled, c_reads.py its
reference in Python), `c_text` (a decimal and a %lld/%s format written in C into a caller's buffer, c_text.pxd:
the Python branch of its callers writes the same text with Python's formatting), and `cython_stand_in` (the
`cython.compiled` that the pure-Python build reads where Cython is not installed).

The modules of kwire.compiled.CORE still sit in their layers, each with its .pxd; they move in here a layer at a
time, behind one contract (capture records in, paired exchanges and their facts as columns out: issue 44), so
that outside this package every module is plain Python.
"""
