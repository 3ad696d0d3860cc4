"""The request log (Kafka's `kafka.request.logger`): one DEBUG line for each request the broker answers.

    wirebroker --log-level wirebroker.request=DEBUG

    [...] DEBUG wirebroker.request: Completed request: Metadata v12 (correlation id 5, client id 'rdkafka') from
    127.0.0.1:40318 on PLAINTEXT as User:ANONYMOUS in 0.4 ms

It tells an operator which client sent what, at which version, and how long the broker took. The compatibility
matrix reads it to compare the versions each client negotiates here with those it negotiates with Apache Kafka
(compat_tests/negotiated.py). Whether it is on is decided once, when the dispatcher is built (`enabled()`): a broker
that does not log requests pays one attribute check per answer.
"""

from __future__ import annotations

import logging
import time

from wirebroker.network.request_channel import Request
from wirebroker.protocol.headers import RequestHeader
from wirebroker.protocol.messages import API_SPECS

LOGGER_NAME = "wirebroker.request"
log = logging.getLogger(LOGGER_NAME)


def enabled() -> bool:
    return log.isEnabledFor(logging.DEBUG)


def log_completed(request: Request, header: RequestHeader) -> None:
    """The line for one answered request: its answer is built, about to be sent (or, for acks=0, dropped)."""
    elapsed_ms = (time.monotonic_ns() - request.received_ns) / 1e6
    log.debug("Completed request: %s v%d (correlation id %d, client id %r) from %s on %s as %s in %.1f ms",
              API_SPECS[header.api_key].name, header.api_version, header.correlation_id, header.client_id,
              request.client_address, request.listener or "-", request.principal, elapsed_ms)
