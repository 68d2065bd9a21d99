import struct

import pytest

from kwire.errors import DecodeError
from kwire.native.kafka_headers import parse_request_header, parse_response_header, plausible_request
from tests.kafka.frames import request_frame, response_frame


def test_request_header_v1_and_v2():
    frame = request_frame(1, 11, 42, "rdkafka", b"BODY")
    h = parse_request_header(frame[4:])
    assert (h.api_key, h.api_version, h.correlation_id, h.client_id) == (1, 11, 42, "rdkafka")
    assert frame[4 + h.header_size:] == b"BODY"
    flex = request_frame(1, 16, 7, "c", b"X", flexible=True)
    h = parse_request_header(flex[4:])
    assert h.header_size == 8 + 2 + 1 + 1 and flex[4 + h.header_size:] == b"X"


def test_quirk_client_id_is_never_compact_even_in_header_v2():
    # A compact string would start with a varint (len+1); the header uses an int16 length.
    body = struct.pack(">hhih", 1, 16, 1, 3) + b"abc" + b"\x00"
    assert parse_request_header(body).client_id == "abc"


def test_null_client_id():
    h = parse_request_header(request_frame(3, 1, 5, None)[4:])
    assert h.client_id is None


def test_truncated_headers_raise_decode_error():
    frame = request_frame(1, 11, 42, "rdkafka")[4:]
    for cut in range(len(frame)):
        if cut < len(frame):
            with pytest.raises(DecodeError):
                parse_request_header(frame[:cut])
    with pytest.raises(DecodeError):
        parse_response_header(b"\x00\x01", 1, 4)


def test_response_header_flexible_tagged_section():
    frame = response_frame(9, b"Z", flexible=True)
    h = parse_response_header(frame[4:], 1, 12)
    assert h.correlation_id == 9 and frame[4 + h.header_size:] == b"Z"


def test_plausible_request():
    good = request_frame(1, 11, 42, "rdkafka")
    assert plausible_request(good, 0, 1 << 20)
    assert not plausible_request(request_frame(999, 0, 1), 0, 1 << 20)  # unknown api key
    assert not plausible_request(request_frame(1, 40, 1), 0, 1 << 20)  # version out of range
    assert not plausible_request(request_frame(1, 4, -5), 0, 1 << 20)  # negative correlation id
    assert not plausible_request(request_frame(1, 4, 1, "bad\x01id"), 0, 1 << 20)
    assert not plausible_request(b"GET / HTTP/1.1\r\n\r\n", 0, 1 << 20)
    assert not plausible_request(good, 0, 10)  # longer than the frame bound
