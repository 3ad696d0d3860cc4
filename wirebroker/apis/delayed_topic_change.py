"""Topic changes that wait for this broker's metadata (Kafka's ZooKeeper-era DelayedCreatePartitions and
DelayedDeleteTopics in the topic purgatory of ZkAdminManager).

In ZooKeeper mode the broker that takes CreateTopics, CreatePartitions or DeleteTopics writes the change to
ZooKeeper (cluster/zk/admin.py) and returns; the controller carries it out and tells every broker through
UpdateMetadata. The answer waits for that, as Kafka's does, but never on a request thread: it is parked here, watched
under each topic's name, and apis/update_metadata.py checks the topics every UpdateMetadata touches.

- A created topic, or a topic grown to `partitions`, is done when the metadata cache shows each of its partitions
  0..partitions-1 with a leader (Kafka's missingLeaderCount); a deleted topic (`partitions` DELETED) when the cache
  no longer knows it.
- At timeout_ms the topics not yet done are answered REQUEST_TIMED_OUT; ZooKeeper holds the change and the
  controller goes on with it. timeout_ms <= 0 answers so at once.
- On a single node (no topic purgatory) the change is complete when the controller returns: answered at once.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from wirebroker.apis.context import RequestContext
from wirebroker.cluster.cluster_view import NO_LEADER
from wirebroker.protocol.errors import RequestTimedOutError
from wirebroker.replica.purgatory import DelayedOperation

if TYPE_CHECKING:  # a cluster member's only: the single node never imports it
    from wirebroker.cluster.metadata_cache import MetadataCache

log = logging.getLogger(__name__)

DELETED = 0  # the partition count of a change that deletes its topic


@dataclass(frozen=True, slots=True)
class TopicChange:
    """A topic this request changed in ZooKeeper and the partition count it must show with leaders (DELETED: gone)."""

    topic: str
    partitions: int

    def done(self, cache: MetadataCache) -> bool:
        if self.partitions == DELETED:
            return cache.topic(self.topic) is None
        for index in range(self.partitions):
            state = cache.partition_state(self.topic, index)
            if state is None or state.leader == NO_LEADER:
                return False
        return True


class DelayedTopicChange(DelayedOperation):
    """Completes when every change is done in `cache`, else at its deadline; `respond` gets the topics not done."""

    def __init__(self, delay_ms: int, cache: MetadataCache, changes: list[TopicChange],
                 respond: Callable[[set[str]], None]) -> None:
        super().__init__(delay_ms)
        self.delay_ms = delay_ms
        self.cache = cache
        self.changes = changes
        self.respond = respond

    def try_complete(self) -> bool:
        if all(change.done(self.cache) for change in self.changes):
            return self.force_complete()
        return False

    def on_expiration(self) -> None:
        log.warning("Topic changes written to ZooKeeper not yet in this broker's metadata after %d ms (timeout_ms): "
                    "%s; answered REQUEST_TIMED_OUT, the controller goes on with them (is one active?)",
                    self.delay_ms, ", ".join(self.pending()))

    def on_complete(self) -> None:
        self.respond(set(self.pending()))

    def pending(self) -> list[str]:
        return [change.topic for change in self.changes if not change.done(self.cache)]


def timed_out(topic: str) -> RequestTimedOutError:
    """The answer for a topic whose change was not done within the request's timeout_ms."""
    return RequestTimedOutError(f"The change to topic {topic} is in ZooKeeper but not yet in this broker's metadata; "
                                "the controller goes on with it.")


def answer_when_done(ctx: RequestContext, timeout_ms: int, changes: Iterable[TopicChange],
                     answer: Callable[[set[str]], Any]) -> Any | None:
    """The response to give now, or None when it is parked in the topic purgatory and `ctx.respond` gets it later.

    `answer(timed_out)` builds the response, REQUEST_TIMED_OUT for the topics in `timed_out`. Nothing changed (every
    topic failed, or validate_only) or a single node: answered now, as done.
    """
    changes = list(changes)
    purgatory = ctx.broker.topic_purgatory
    if purgatory is None or not changes:
        return answer(set())
    if timeout_ms <= 0:
        return answer({change.topic for change in changes})

    def respond(timed_out: set[str]) -> None:
        # Maybe on the thread applying an UpdateMetadata: a failure goes to this request, never to that one.
        try:
            response = answer(timed_out)
        except Exception as exc:  # noqa: BLE001  (the dispatcher logs it and answers UNKNOWN_SERVER_ERROR)
            response = exc
        ctx.respond(response)

    operation = DelayedTopicChange(timeout_ms, ctx.broker.metadata_cache, changes, respond)
    purgatory.try_complete_else_watch(operation, {change.topic for change in changes})
    return None
