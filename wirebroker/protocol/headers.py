"""Request and response headers, with the header version chosen from the API's flexible versions as Kafka does.

Request header v0: api_key int16, api_version int16, correlation_id int32; v1 adds client_id (a nullable int16
string, never compact); v2 (flexible APIs) adds a tagged-field section. Response header v0 is the correlation id;
v1 adds a tagged-field section. ApiVersions answers always use response header v0: a client reads that answer before
it knows which versions the broker speaks. ControlledShutdown v0 alone used request header v0.
"""

from __future__ import annotations

import functools
import struct
from typing import Any, NamedTuple

from wirebroker.protocol.messages import API_SPECS
from wirebroker.protocol.primitives import DecodeError, Output, read_uvarint

API_VERSIONS_KEY = 18
CONTROLLED_SHUTDOWN_KEY = 7

_KEY_VERSION_CORRELATION = struct.Struct(">hhi")
_INT16 = struct.Struct(">h")
_CORRELATION = struct.Struct(">i")
_SIZE_AND_CORRELATION = struct.Struct(">ii")


class RequestHeader(NamedTuple):
    api_key: int
    api_version: int
    correlation_id: int
    client_id: str | None
    header_version: int


# Every request's header is built this way: a NamedTuple's own __new__ is a Python function, one call more.
_new_header = functools.partial(tuple.__new__, RequestHeader)


# API key -> its first flexible version, for the APIs that have one: asked twice per request (header in and out).
_FIRST_FLEXIBLE = {key: spec.first_flexible_version for key, spec in API_SPECS.items()
                   if spec.first_flexible_version is not None}


def is_flexible(api_key: int, api_version: int) -> bool:
    first = _FIRST_FLEXIBLE.get(api_key)
    return first is not None and api_version >= first


def request_header_version(api_key: int, api_version: int) -> int:
    if is_flexible(api_key, api_version):
        return 2
    if api_key == CONTROLLED_SHUTDOWN_KEY and api_version == 0:
        return 0
    return 1


def response_header_version(api_key: int, api_version: int) -> int:
    if api_key == API_VERSIONS_KEY:
        return 0
    return 1 if is_flexible(api_key, api_version) else 0


# API key -> the header version of each of its known versions, from the two functions above: every request reads one
# entry of each table instead of calling them (two calls each). A version past the table is asked of the function.
_REQUEST_HEADER_VERSIONS = {key: tuple(request_header_version(key, v) for v in range(spec.max_version + 1))
                            for key, spec in API_SPECS.items()}
_RESPONSE_HEADER_VERSIONS = {key: tuple(response_header_version(key, v) for v in range(spec.max_version + 1))
                             for key, spec in API_SPECS.items()}


def read_request_header(frame: memoryview) -> tuple[RequestHeader, int]:
    """The header of a request frame and the position where its body starts.

    Tagged header fields (none are defined for requests yet) are skipped.
    """
    try:
        api_key, api_version, correlation_id = _KEY_VERSION_CORRELATION.unpack_from(frame, 0)
        versions = _REQUEST_HEADER_VERSIONS.get(api_key)
        if versions is not None and 0 <= api_version < len(versions):
            version = versions[api_version]
        else:
            version = request_header_version(api_key, api_version)
        pos = 8
        client_id = None
        if version >= 1:
            (length,) = _INT16.unpack_from(frame, pos)
            pos += 2
            if length >= 0:
                if pos + length > len(frame):
                    raise DecodeError(f"request header: client id length {length} past the end")
                client_id = str(frame[pos : pos + length], "utf-8")
                pos += length
        if version >= 2:
            if frame[pos] == 0:  # no tagged fields (no client sends any yet): skip the general loop
                return _new_header((api_key, api_version, correlation_id, client_id, version)), pos + 1
            count, pos = read_uvarint(frame, pos)
            for _ in range(count):
                _tag, pos = read_uvarint(frame, pos)
                size, pos = read_uvarint(frame, pos)
                pos += size
            if pos > len(frame):
                raise DecodeError("request header: tagged fields past the end")
    except (struct.error, IndexError, UnicodeDecodeError) as exc:
        raise DecodeError(f"request header: {exc}") from None
    return _new_header((api_key, api_version, correlation_id, client_id, version)), pos


def response_header_bytes(correlation_id: int, header_version: int) -> bytes:
    """The encoded response header: the correlation id, plus an empty tagged-field section in v1."""
    encoded = _CORRELATION.pack(correlation_id)
    return encoded + b"\x00" if header_version >= 1 else encoded


def response_frame_parts(header: RequestHeader, body: Any, version: int | None = None) -> list[Any]:
    """The size-prefixed response frame to `header`'s request as parts (bytes-like and file ranges), encoded once,
    copied never; `body` is a generated response message, written at `version` (default: the request's)."""
    version = header.api_version if version is None else version
    api_key = header.api_key
    versions = _RESPONSE_HEADER_VERSIONS.get(api_key)
    if versions is not None and 0 <= version < len(versions):
        header_version = versions[version]
    else:
        header_version = response_header_version(api_key, version)
    out = Output()
    out += _SIZE_AND_CORRELATION.pack(0, header.correlation_id)  # the frame size is written once the body is encoded
    if header_version >= 1:
        out.append(0)  # no tagged fields
    body.write(out, version)
    return out.size_prefixed_parts()
