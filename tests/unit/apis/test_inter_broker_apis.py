"""Inter-broker APIs: registered by a cluster member only, served at their schema's versions, never advertised."""

from __future__ import annotations

from wirebroker.apis import inter_broker  # noqa: F401  (what a cluster member imports)
from wirebroker.apis.registry import SERVED, supported_versions
from wirebroker.protocol.messages import API_SPECS

LEADER_AND_ISR, STOP_REPLICA, UPDATE_METADATA = 4, 5, 6


def test_served_at_the_schema_versions_but_not_advertised():
    advertised = supported_versions()
    for key in (LEADER_AND_ISR, STOP_REPLICA, UPDATE_METADATA):
        api = SERVED[key]
        assert not api.advertised and key not in advertised
        assert (api.min_version, api.max_version) == (API_SPECS[key].min_version, API_SPECS[key].max_version)
    assert 0 in advertised and 1 in advertised  # client APIs still are
