"""Every generated message, at every version, round-trips: decode(encode(x)) == x and the bytes are stable."""

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.unit.protocol.message_strategies import all_messages, message_class, struct_values

CASES = [(m, v) for m in all_messages() for v in m.versions()]


@pytest.mark.parametrize("message,version", CASES, ids=[f"{m.name}-v{v}" for m, v in CASES])
@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data())
def test_round_trip(message, version, data):
    cls = message_class(message)
    value = data.draw(struct_values(message, message.struct, version))
    encoded = value.encode(version)
    decoded = cls.decode(encoded, version)
    assert decoded == value
    assert decoded.encode(version) == encoded


def test_every_api_key_has_request_and_response_in_the_registry():
    from wirebroker.protocol.messages import API_SPECS

    requests = {m.api_key for m in all_messages() if m.kind == "request"}
    assert set(API_SPECS) == requests
    assert API_SPECS[0].request == "ProduceRequest" and API_SPECS[0].response == "ProduceResponse"
