from wirebroker.protocol import headers
from wirebroker.protocol.primitives import DecodeError

import pytest


def test_header_versions_follow_flexible_versions():
    assert headers.request_header_version(0, 8) == 1  # Produce v8 is not flexible
    assert headers.request_header_version(0, 9) == 2
    assert headers.response_header_version(0, 9) == 1
    assert headers.response_header_version(18, 3) == 0  # ApiVersions always answers with header v0
    assert headers.request_header_version(18, 3) == 2
    assert headers.request_header_version(18, 99) == 2  # newer than known: still flexible, answered with v0
    assert headers.request_header_version(7, 0) == 0


def test_read_flexible_request_header_with_tagged_fields():
    frame = b"\x00\x12\x00\x03\x00\x00\x00\x07" + b"\x00\x03abc" + b"\x01\x05\x02xy" + b"BODY"
    header, pos = headers.read_request_header(memoryview(frame))
    assert header == headers.RequestHeader(18, 3, 7, "abc", 2)
    assert frame[pos:] == b"BODY"


def test_null_client_id_and_truncated_header():
    header, pos = headers.read_request_header(memoryview(b"\x00\x03\x00\x01\x00\x00\x00\x01\xff\xff"))
    assert header.client_id is None and pos == 10
    with pytest.raises(DecodeError):
        headers.read_request_header(memoryview(b"\x00\x03\x00\x01\x00\x00\x00\x01\x00\x09ab"))
    with pytest.raises(DecodeError):
        headers.read_request_header(memoryview(b"\x00\x03"))


def test_response_header_bytes():
    assert headers.response_header_bytes(5, 0) == b"\x00\x00\x00\x05"
    assert headers.response_header_bytes(5, 1) == b"\x00\x00\x00\x05\x00"
