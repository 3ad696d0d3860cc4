"""`/compat`: per API key, the versions this broker advertises (its own, or an emulated Kafka release's), those
Apache Kafka advertises for the release the schemas come from, and the test files that exercise the key.

    {"emulating": null, "kafka_release": "4.3.1", "tests_from": "tests/ and compat_tests/ (...)",
     "apis": [{"key": 0, "name": "Produce", "advertised": [0, 13], "kafka": [0, 13],
               "tests": ["tests/integration/test_client_round_trips.py", ...]}, ...]}

One row per key either side advertises, in key order; `advertised` or `kafka` is null where that side has none;
`tests` is null when the package runs without its repository's test tree (server/web/exercised.py).
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

from wirebroker.protocol.messages import (
    API_SPECS,
    KAFKA_ADVERTISED_VERSIONS,
    KAFKA_VERSION,
)
from wirebroker.server.web.exercised import TEST_DIRS, exercised_by, has_test_tree

if TYPE_CHECKING:
    from wirebroker.server.web.broker_view import ObservedBroker


@functools.cache
def _exercised() -> dict[int, list[str]] | None:
    return exercised_by() if has_test_tree() else None


def compat_document(broker: ObservedBroker) -> dict[str, Any]:
    table = broker.dispatcher.table
    exercised = _exercised()
    rows = []
    for key in sorted(set(table.advertised) | set(KAFKA_ADVERTISED_VERSIONS)):
        ours, kafka = table.advertised.get(key), KAFKA_ADVERTISED_VERSIONS.get(key)
        rows.append({"key": key, "name": API_SPECS[key].name, "advertised": list(ours) if ours else None,
                     "kafka": list(kafka) if kafka else None,
                     "tests": None if exercised is None else exercised.get(key, [])})
    return {
        "emulating": table.release,
        "kafka_release": KAFKA_VERSION,
        "tests_from": None if exercised is None else
        f"{' and '.join(d + '/' for d in TEST_DIRS)}: files naming the API's request class or a client call that "
        "sends it (wirebroker/server/web/exercised.py)",
        "apis": rows,
    }
