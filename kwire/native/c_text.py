"""kwire/native/c_text.pxd's whole texts in Python: what the pure-Python build runs under the same names (a
compiled module cimports the .pxd as `c_text`, so there each is written in C). tests/native/test_c_text.py holds
the two to the same bytes."""

from __future__ import annotations

_BATCH_KEY = b"('%s', %d, %d, %d))"


def _batch_key_text(kind: bytes, x: int, y: int, z: int) -> bytes:
    """A batch's key after its topic and partition as repr writes it (x, y and z fit in 64 bits)."""
    return _BATCH_KEY % (kind, x, y, z)
