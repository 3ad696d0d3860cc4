"""Group coordinator requests answered off the network threads in a cluster (Kafka runs its group coordinator on
threads of its own, never on the network or request handler threads).

In a cluster a coordinator write waits, under the coordinator's lock, until the followers of its `__consumer_offsets`
partition have it (acks=all). The followers' fetches are answered by this broker's network threads (with the
default num.io.threads=0 requests are handled inline there), so a group request holding or waiting for that lock on
a network thread could stall the very fetch it waits for. `off_network_thread` wraps a group API's handler: in a
cluster the handler runs on the broker's group request thread (`broker.group_requests`) and answers through
`ctx.respond`; on a single broker (no followers, writes complete at once) it runs inline, as before. Another
executor may be named (`executor_of`): the share groups' requests have threads of their own (apis/share_services.py).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from wirebroker.apis.context import RequestContext

if TYPE_CHECKING:
    from concurrent.futures import Executor

Handler = Callable[[RequestContext, Any], Any]


def off_network_thread(handle: Handler,
                       executor_of: Callable[[RequestContext], Executor | None] = lambda ctx: ctx.broker.group_requests
                       ) -> Handler:
    def run(ctx: RequestContext, request: Any) -> Any:
        executor = executor_of(ctx)
        if executor is None:
            return handle(ctx, request)

        def answer() -> None:
            try:
                response = handle(ctx, request)
            except Exception as exc:  # noqa: BLE001  (answered by the dispatcher as a handler that raised)
                response = exc
            if response is not None:
                ctx.respond(response)

        executor.submit(answer)
        return None

    return run
