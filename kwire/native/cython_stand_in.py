"""What a compiled module's `cython.compiled` reads where Cython is not installed (the pure-Python build).

A module of the compiled core (kwire.compiled.CORE) with a C-only fast path writes

    try:
        import cython
    except ImportError:
        from kwire.native.cython_stand_in import cython

and branches on `cython.compiled`: compiled, Cython reads it as the constant True and cuts the other
branch out; run as Python, it is False (Cython's own pure-Python module says the same where Cython is
installed). Both branches run in CI (the tests on each build) and give the same bytes.
"""

from types import SimpleNamespace

cython = SimpleNamespace(compiled=False)
