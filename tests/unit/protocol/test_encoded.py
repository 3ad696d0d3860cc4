"""An answer encoded once (protocol/encoded.py): the same bytes as the message's own encoding, and a throttled
answer carries its throttle_time_ms without changing what the other requests get."""

import pytest

from wirebroker.protocol.encoded import EncodedMessage
from wirebroker.protocol.messages.api_versions import ApiVersionsResponse
from wirebroker.protocol.primitives import Output


def _message() -> ApiVersionsResponse:
    return ApiVersionsResponse(error_code=0, api_keys=[
        ApiVersionsResponse.ApiVersion(api_key=key, min_version=0, max_version=key % 7) for key in range(40)])


def _written(answer: object, version: int) -> bytes:
    out = Output()
    answer.write(out, version)  # type: ignore[attr-defined]
    return b"".join(bytes(part) for part in out.parts())


@pytest.mark.parametrize("version", [0, 1, 3, 4])
def test_answer_is_the_message_encoding(version: int) -> None:
    encoded = EncodedMessage(_message(), version)
    assert _written(encoded.answer(), version) == _message().encode(version)
    assert _written(encoded.answer(), version) == _message().encode(version)  # again: the same bytes


def test_a_throttled_answer_is_encoded_afresh_and_leaves_the_shared_bytes() -> None:
    encoded = EncodedMessage(_message(), 3)
    throttled = encoded.answer()
    throttled.throttle_time_ms = 250
    expected = _message()
    expected.throttle_time_ms = 250
    assert ApiVersionsResponse.decode(_written(throttled, 3), 3) == expected
    assert _written(encoded.answer(), 3) == _message().encode(3)
    assert encoded.message == _message()


def test_written_only_at_its_version() -> None:
    with pytest.raises(ValueError, match="v3, not v2"):
        _written(EncodedMessage(_message(), 3).answer(), 2)
