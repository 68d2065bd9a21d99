"""kwire/native/c_text.py, the pure build's twin of kwire/native/c_text.pxd's whole texts: a batch's key is
written as repr writes it, for every number of 64 bits, and stable_hash3, which hashes that text (compiled, the
text written in C), is stable_hash's CRC of repr."""

from __future__ import annotations

import random

from kwire.native.mergeable import stable_hash, stable_hash3
from kwire.native import c_text

EDGES = [0, 1, -1, 9, 10, 99, 100, -10, (1 << 63) - 1, -(1 << 63), (1 << 31) - 1, -(1 << 31), 10**18, -(10**18)]


def test_a_batch_key_is_written_as_repr_writes_it():
    rng = random.Random(11)
    values = EDGES + [rng.randrange(-(1 << 63), 1 << 63) for _ in range(300)]
    for i, x in enumerate(values):
        y, z = values[(i * 7) % len(values)], values[(i * 13) % len(values)]
        for kind in ("crc", "pid"):
            want = f"({kind!r}, {x!r}, {y!r}, {z!r}))".encode()
            assert c_text._batch_key_text(kind.encode(), x, y, z) == want
            assert stable_hash3("topic", 3, (kind, x, y, z)) == stable_hash("topic", 3, (kind, x, y, z))


def test_a_key_past_64_bits_or_of_another_shape_is_hashed_by_repr():
    for c in (("crc", 1 << 63, 0, 0), ("pid", 0, -(1 << 63) - 1, 0), ("crc", 1, 2), ("other", 1, 2, 3),
              ("crc", 1.0, 2, 3), ("crc", True, 2, 3), None, "x"):
        assert stable_hash3("t", 0, c) == stable_hash("t", 0, c), c


def test_a_batch_header_is_written_into_its_format_or_refused():
    import struct

    import pytest

    form = b'{"size":%lld,"b":%lld,"len":%lld,"e":%lld,"m":%lld,"crc":%lld,"v":%s,"a":%s,"d":%lld,"t0":%lld,' \
           b'"t1":%lld,"pid":%lld,"pe":%lld,"seq":%lld,"n":%lld,"last":%lld,"bytes":%lld}'
    head = struct.pack(">qiibIhiqqqhii", 100, 49, -1, 2, 0xDEADBEEF, 3, 4, 1700, 1800, -1, -1, -1, 5)
    text = c_text._batch_header_text(form, 77, head + b"\0" * 8, 0, b"true", b'{"x":1}')
    assert text == (b'{"size":77,"b":100,"len":49,"e":-1,"m":2,"crc":3735928559,"v":true,"a":{"x":1},"d":4,'
                    b'"t0":1700,"t1":1800,"pid":-1,"pe":-1,"seq":-1,"n":5,"last":104,"bytes":61}')
    without_size = form.replace(b'"size":%lld,', b"")
    assert c_text._batch_header_text(without_size, -1, head, 0, b"true", b"{}").startswith(b'{"b":100,')
    past = struct.pack(">qiibIhiqqqhii", (1 << 63) - 2, 49, 0, 2, 0, 0, 4, 0, 0, 0, 0, 0, 5)
    assert c_text._batch_header_text(form, 1, past, 0, b"true", b"{}") is None  # the last offset past 64 bits
    with pytest.raises(IndexError):
        c_text._batch_header_text(form, 1, head[:60], 0, b"true", b"{}")
