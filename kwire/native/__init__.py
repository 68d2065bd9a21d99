"""kwire's native code, in one place: what runs compiled, each with its pure-Python reference beside it.

Each module here is a pair: a `.pxd` of inline C (Cython), which a compiled module of kwire cimports under the
module's name (`cimport kwire.native.c_reads as c_reads`), and a `.py` of the same names in Python, which that
module imports as such (`from kwire.native import c_reads`). Compiled, `c_reads._i32(buf, pos)` is the inline C;
in the pure-Python build it is a call of the Python twin. Outside this package no module needs a name that
exists only compiled, and the tests run each twin against its C through the modules that call them:

- `c_reads`: big-endian numbers, a byte, UTF-8 text, a run of bytes and a v2 record batch header read from a
  buffer, bounds-checked (the compiled decoders inline them too);
- `c_text`: a decimal and a %lld/%s format written into a caller's buffer; a batch key's text and a batch
  header's JSON text made whole;
- `c_ints`: a time's bucket at a resolution, a dict's look-up as a C call;
- `c_parts`: the exchange parts' wire format (kwire.parts_wire) written and read;
- `cython_stand_in`: the `cython.compiled` the pure-Python build reads where Cython is not installed.

The modules of kwire.compiled.CORE still sit in their layers, each with its .pxd; they move in here a layer at a
time, behind one contract (capture records in, paired exchanges and their facts as columns out: issue 44), so
that outside this package every module is plain Python.
"""
