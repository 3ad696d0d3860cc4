"""Throttling a request by its client's quotas (KafkaApis' quota steps and RequestHandlerHelper.throttle), wrapped
around the dispatcher's `finish` while client quotas are set (server/dispatch.py).

- Produce: the request's size counts against producer_byte_rate, acks=0 included (no response, but the connection
  is still muted).
- Fetch from a consumer: max_bytes is first capped to what the quota allows in one window (Kafka's
  maxValueInQuotaWindow); the encoded response's size counts against consumer_byte_rate. If that or the request
  quota throttles, the bytes are taken back and the answer is an empty response with the throttle time, as Kafka's
  getThrottledResponse (an incremental session keeps its id, a full fetch gets none). Unlike Kafka, the fetch
  session has already noted what the unsent response held. Followers (replica id >= 0) are not throttled.
- Every request: the handler thread's time spent on it counts against request_percentage (100 = one thread all the
  time). Time a request waits in a purgatory is no thread's time and does not count. Exempt, as Kafka exempts
  cluster actions: the inter-broker APIs (LeaderAndIsr, UpdateMetadata, WriteTxnMarkers, ...) and follower fetches,
  so a default user quota never slows replication (inter-broker principals are often ANONYMOUS on PLAINTEXT).
- The response carries throttle_time_ms (the larger throttle), and the network processor keeps the connection muted
  that long after sending it (KIP-219: the client waits too).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from wirebroker.apis.context import NO_RESPONSE
from wirebroker.network.request_channel import Request, Response
from wirebroker.protocol.headers import RequestHeader
from wirebroker.protocol.message import Message
from wirebroker.protocol.messages.fetch import FetchRequest, FetchResponse
from wirebroker.protocol.messages.produce import ProduceRequest
from wirebroker.server.quota_managers import (
    NANOS_TO_PERCENTAGE_PER_SECOND,
    ClientQuotaManagers,
)

Finish = Callable[[Any], Response | None]

# Kafka's cluster-action APIs (ApiKeys with clusterAction=true): LeaderAndIsr, StopReplica, UpdateMetadata,
# ControlledShutdown, WriteTxnMarkers, AlterPartition.
CLUSTER_ACTION_APIS = frozenset({4, 5, 6, 7, 27, 56})


def quota_user(principal: str) -> str:
    """The user a quota names: the principal's name ("User:alice" -> "alice")."""
    return principal.partition(":")[2]


def throttled(quotas: ClientQuotaManagers, request: Request, header: RequestHeader, body: Message,
              finish: Finish) -> Finish:
    """`finish` wrapped to record the request against its client's quotas and throttle its answer."""
    user, client_id = quota_user(request.principal), header.client_id or ""
    api_key = header.api_key
    consumer_fetch = api_key == FetchRequest.API_KEY and _replica_id(body) < 0
    if api_key in CLUSTER_ACTION_APIS or (api_key == FetchRequest.API_KEY and not consumer_fetch):
        return finish
    if consumer_fetch and quotas.fetch.enabled:
        most = quotas.fetch.max_value_in_window(user, client_id)
        if most is not None:
            body.max_bytes = min(body.max_bytes, max(int(most), 1))
    started_ns, thread = time.perf_counter_ns(), threading.get_ident()

    def finish_throttled(answer: Any) -> Response | None:
        now_ms = int(time.monotonic() * 1000)
        request_ms = 0
        if quotas.request.enabled and threading.get_ident() == thread:
            spent = (time.perf_counter_ns() - started_ns) * NANOS_TO_PERCENTAGE_PER_SECOND
            request_ms = quotas.request.record(user, client_id, spent, now_ms)
        if not isinstance(answer, Message) and answer is not NO_RESPONSE:
            return finish(answer)  # an error or a close: nothing to throttle
        bandwidth_ms = 0
        if api_key == ProduceRequest.API_KEY:
            bandwidth_ms = quotas.produce.record(user, client_id, len(request.frame), now_ms)
        elif consumer_fetch and quotas.fetch.enabled and isinstance(answer, FetchResponse):
            response = finish(answer)
            size = _size(response)
            bandwidth_ms = quotas.fetch.record(user, client_id, size, now_ms)
            throttle_ms = max(bandwidth_ms, request_ms)
            if not throttle_ms:
                return response
            quotas.fetch.unrecord(user, client_id, size, now_ms)
            # Kafka's getThrottledResponse: an incremental session keeps its id, a full fetch is answered without one
            session_id = answer.session_id if body.session_epoch > 0 else 0
            answer = FetchResponse(error_code=answer.error_code, session_id=session_id, responses=[])
        throttle_ms = max(bandwidth_ms, request_ms)
        if throttle_ms and answer is not NO_RESPONSE and hasattr(answer, "throttle_time_ms"):
            answer.throttle_time_ms = max(answer.throttle_time_ms, throttle_ms)
        response = finish(answer)
        if response is not None:
            response.throttle_ms = throttle_ms
        return response

    return finish_throttled


def _replica_id(body: Message) -> int:
    state = getattr(body, "replica_state", None)
    return state.replica_id if state is not None and state.replica_id >= 0 else body.replica_id


def _size(response: Response | None) -> int:
    if response is None or response.parts is None:
        return 0
    return sum(part.size if hasattr(part, "size") else len(part) for part in response.parts)
