"""Fixtures of the network tests; the helpers live in network_helpers (a unique name, imported by the tests)."""

from collections.abc import Iterator

import pytest
from network_helpers import Broker, running_broker


@pytest.fixture
def broker() -> Iterator[Broker]:
    with running_broker() as b:
        yield b
