"""Bad input never escapes as anything but CaptureError: truncation at every offset, random bytes,
random mutations of valid files (pcap, pcapng, gzip of each)."""

from __future__ import annotations

import gzip
import io
import itertools

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kwire.capture.files import open_capture
from kwire.capture.pcap import MAGICS
from kwire.capture.pcapng import SHB_MAGIC
from kwire.errors import CaptureError
from tests.capture import builders as b

T0 = 1_700_000_000_000_000_000
PAYLOADS = [b"", b"a", b"bb" * 17, b"c" * 61]


def pcap_parts(**kw) -> list[bytes]:
    whole = b.pcap([(T0 + i, p) for i, p in enumerate(PAYLOADS)], **kw)
    hsize = 24 if kw.get("modified") else 16
    parts, pos = [whole[:24]], 24
    for p in PAYLOADS:
        parts.append(whole[pos : pos + hsize + len(p)])
        pos += hsize + len(p)
    return parts


def pcapng_parts() -> list[bytes]:
    return [
        b.shb("<"), b.idb(1, "<", tsresol=9), b.epb(0, 5, PAYLOADS[0]), b.block(0xBAD, b"?"),
        b.idb(113, "<", tsresol=0x83), b.epb(1, 77, PAYLOADS[1]),
        b.shb(">"), b.idb(101, ">", snaplen=40), b.obsolete_pb(0, 9, PAYLOADS[2], ">"),
        b.spb(PAYLOADS[3], ">"),
    ]


FILES = {
    "pcap-le-us": pcap_parts(),
    "pcap-be-ns": pcap_parts(order=">", nano=True),
    "pcap-modified": pcap_parts(modified=True),
    "pcapng": pcapng_parts(),
}
PACKET_PARTS = {  # which parts carry a packet
    name: [i for i in range(1, len(parts))] for name, parts in FILES.items() if name != "pcapng"
}
PACKET_PARTS["pcapng"] = [2, 5, 8, 9]


def run(data: bytes) -> tuple[list[bytes], CaptureError | None]:
    """Read everything; only CaptureError may come out (anything else fails the test)."""
    got = []
    try:
        for p in open_capture(io.BytesIO(data)):
            got.append(p.data)
    except CaptureError as exc:
        assert "\n" not in str(exc)
        return got, exc
    return got, None


def full_packets(name: str) -> list[bytes]:
    return run(b"".join(FILES[name]))[0]


def test_full_files_read_cleanly():
    for name in FILES:
        got, err = run(b"".join(FILES[name]))
        assert err is None, name
        assert len(got) == len(PACKET_PARTS[name])


def test_truncated_at_every_offset():
    for name, parts in FILES.items():
        whole = b"".join(parts)
        expected = full_packets(name)
        bounds = list(itertools.accumulate(len(p) for p in parts))
        for cut in range(len(whole)):
            got, err = run(whole[:cut])
            assert got == expected[: len(got)], (name, cut)
            complete = [i for i, end in enumerate(bounds) if end <= cut]
            if cut in bounds:
                assert err is None, (name, cut, err)
                assert len(got) == sum(1 for i in PACKET_PARTS[name] if i in complete), (name, cut)
            else:
                assert err is not None, (name, cut)  # a cut inside a header or record


def test_gzip_truncated_at_every_offset():
    for name, parts in FILES.items():
        comp = gzip.compress(b"".join(parts))
        expected = full_packets(name)
        for cut in range(len(comp)):
            got, err = run(comp[:cut])
            assert got == expected[: len(got)], (name, cut)
            assert err is not None, (name, cut)  # every strict prefix of a gzip stream is damaged


def test_trailing_garbage_keeps_every_packet():
    for name, parts in FILES.items():
        for garbage in (b"\x00", b"\xff" * 7, b"\x01\x00\x00\x00" * 9, bytes(range(256))):
            got, err = run(b"".join(parts) + garbage)
            assert got[: len(full_packets(name))] == full_packets(name), (name, garbage)


MAGIC_PREFIXES = list(MAGICS) + [SHB_MAGIC, b"\x1f\x8b", b""]


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(MAGIC_PREFIXES), st.binary(max_size=300))
def test_random_bytes(prefix, tail):
    run(prefix + tail)


@settings(max_examples=600, deadline=None)
@given(
    st.sampled_from(sorted(FILES)),
    st.booleans(),
    st.lists(st.tuples(st.integers(min_value=0), st.integers(0, 255)), min_size=1, max_size=6),
)
def test_random_mutations(name, compress, edits):
    data = bytearray(b"".join(FILES[name]))
    if compress:
        data = bytearray(gzip.compress(bytes(data)))
    for where, value in edits:
        data[where % len(data)] = value
    run(bytes(data))
