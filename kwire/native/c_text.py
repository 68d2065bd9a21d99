"""kwire/native/c_text.pxd's whole texts in Python: what the pure-Python build runs under the same names (a
compiled module cimports the .pxd as `c_text`, so there each is written in C). tests/native/test_c_text.py holds
the two to the same bytes."""

from __future__ import annotations

from kwire.native import c_reads

_BATCH_KEY = b"('%s', %d, %d, %d))"


def _batch_key_text(kind: bytes, x: int, y: int, z: int) -> bytes:
    """A batch's key after its topic and partition as repr writes it (x, y and z fit in 64 bits)."""
    return _BATCH_KEY % (kind, x, y, z)


_I64_MIN, _I64_MAX = -(1 << 63), (1 << 63) - 1
_PYTHON_FORMS: dict[bytes, bytes] = {}  # a printf format -> the same for bytes % (%lld as %d)


def _batch_header_text(form: bytes, size: int, buf, pos: int, valid: bytes, attributes: bytes) -> bytes | None:
    """`form` written with the v2 batch header at buf[pos:] (see c_text.pxd), or None."""
    (base_offset, length, epoch, magic, crc, _, last_delta, base_ts, max_ts, producer_id, producer_epoch,
     base_sequence, count) = c_reads._v2_head(buf, pos)
    if base_offset < _I64_MIN - last_delta if last_delta < 0 else base_offset > _I64_MAX - last_delta:
        return None
    python_form = _PYTHON_FORMS.get(form)
    if python_form is None:
        python_form = _PYTHON_FORMS[form] = form.replace(b"%lld", b"%d")
    values = (base_offset, length, epoch, magic, crc, valid, attributes, last_delta, base_ts, max_ts, producer_id,
              producer_epoch, base_sequence, count, base_offset + last_delta, 12 + length)
    text = python_form % (((size,) + values) if size >= 0 else values)
    return text if len(text) <= 1024 else None
