"""DeleteTopics: API key 20, versions 1-6.

Behaviour (Kafka's ControllerApis.deleteTopics):
- `delete.topic.enable=false`: every topic gets TOPIC_DELETION_DISABLED (v3+), or INVALID_REQUEST "Topic deletion
  is disabled." before v3 (older clients do not know the newer code).
- Each named topic is deleted with its partitions' logs. Unknown name: UNKNOWN_TOPIC_OR_PARTITION; unknown id:
  UNKNOWN_TOPIC_ID.
- A name or id given twice: INVALID_REQUEST "Duplicate topic name." / "Duplicate topic id."; both a name and an id
  in one entry, or neither: INVALID_REQUEST; a name whose topic's id was also given: INVALID_REQUEST for it.
- Internal topics (`__consumer_offsets`, `__transaction_state`) are deleted like any other, as a KRaft Kafka does;
  the coordinators that own them recreate them when needed.
- On a single node deletion completes before the answer. In ZooKeeper mode (Kafka's ZkAdminManager.deleteTopics)
  the topics are marked for deletion in ZooKeeper (a topic already marked is waited for again) and the answer waits,
  off the request thread, until this broker's metadata no longer shows them, at most timeout_ms: those still there
  get REQUEST_TIMED_OUT, as with timeout_ms <= 0 at once; the controller deletes them all the same
  (apis/delayed_topic_change.py).
Authorization (with an authorizer, as Kafka's ControllerApis.deleteTopics; DELETE on the cluster allows all):
- A topic named needs DESCRIBE, else TOPIC_AUTHORIZATION_FAILED before its existence is looked at; then DELETE, else
  TOPIC_AUTHORIZATION_FAILED. A topic named by id without DELETE is answered without its name unless the principal
  may DESCRIBE it.
Version notes:
- v0 is not served (Kafka 4, KIP-896); v1+ throttle time; v3+ TOPIC_DELETION_DISABLED (KIP-322); v4+ flexible;
  v5+ error messages; v6+ topics by name or id (KIP-516), and results carry the topic id.
"""

from __future__ import annotations

import logging
from collections import Counter

from wirebroker.apis.context import RequestContext
from wirebroker.apis.delayed_topic_change import (
    DELETED,
    TopicChange,
    answer_when_done,
    timed_out,
)
from wirebroker.apis.registry import serve
from wirebroker.cluster.acls import AclOperation, ResourceType
from wirebroker.protocol.errors import (
    ErrorCode,
    InvalidRequestError,
    KafkaError,
    TopicAuthorizationFailedError,
    TopicDeletionDisabledError,
    UnknownTopicIdError,
    UnknownTopicOrPartitionError,
)
from wirebroker.protocol.messages.delete_topics import (
    DeleteTopicsRequest,
    DeleteTopicsResponse,
)
from wirebroker.protocol.primitives import UUID_ZERO

log = logging.getLogger(__name__)

API_KEY = 20

FIRST_DELETION_DISABLED_VERSION = 3  # KIP-322
FIRST_TOPIC_ID_VERSION = 6  # KIP-516

_Result = DeleteTopicsResponse.DeletableTopicResult


def handle(ctx: RequestContext, request: DeleteTopicsRequest) -> DeleteTopicsResponse | None:
    requested = (request.topics if ctx.api_version >= FIRST_TOPIC_ID_VERSION
                 else [DeleteTopicsRequest.DeleteTopicState(name=name, topic_id=UUID_ZERO)
                       for name in request.topic_names])
    if not ctx.broker.config["delete.topic.enable"]:
        disabled = (TopicDeletionDisabledError() if ctx.api_version >= FIRST_DELETION_DISABLED_VERSION
                    else InvalidRequestError("Topic deletion is disabled."))
        log.info("DeleteTopics from %s refused: delete.topic.enable is false", ctx.client)
        return DeleteTopicsResponse(responses=[_result(t.name, t.topic_id, disabled) for t in requested])
    names = Counter(t.name for t in requested if t.name is not None and t.topic_id == UUID_ZERO)
    ids = Counter(t.topic_id for t in requested if t.name is None and t.topic_id != UUID_ZERO)
    results: list[_Result] = []
    to_delete: dict[bytes, str] = {}  # topic id -> name, in request order
    for wanted in requested:
        if names[wanted.name] > 1 or ids[wanted.topic_id] > 1:
            continue  # answered once below
        if wanted.name is not None and not _may(ctx, AclOperation.DESCRIBE, wanted.name):
            results.append(_result(wanted.name, wanted.topic_id, TopicAuthorizationFailedError()))
            continue  # its existence is not disclosed
        try:
            topic_id, name = _resolve(ctx, wanted)
        except KafkaError as exc:
            results.append(_result(wanted.name, wanted.topic_id, exc))
            continue
        if not _may(ctx, AclOperation.DELETE, name):
            # Named by id: the name only to a principal that may DESCRIBE it (ids are not secret, names are).
            shown = name if wanted.name is not None or _may(ctx, AclOperation.DESCRIBE, name) else None
            results.append(_result(shown, wanted.topic_id, TopicAuthorizationFailedError()))
            continue
        if topic_id in to_delete or ids[topic_id] > 1:
            to_delete.pop(topic_id, None)
            results.append(_result(name, topic_id, InvalidRequestError(
                "The provided topic name maps to an ID that was already supplied.")))
            continue
        to_delete[topic_id] = name
    results += [_result(n, UUID_ZERO, InvalidRequestError("Duplicate topic name.")) for n, c in names.items() if c > 1]
    results += [_result(None, i, InvalidRequestError("Duplicate topic id.")) for i, c in ids.items() if c > 1]
    outcomes = [(topic_id, name, _delete(ctx, name)) for topic_id, name in to_delete.items()]

    def answer(late: set[str]) -> DeleteTopicsResponse:
        return DeleteTopicsResponse(responses=results + [
            _result(name, topic_id, timed_out(name) if name in late else error) for topic_id, name, error in outcomes])

    changes = [TopicChange(name, DELETED) for _, name, error in outcomes if error is None]
    return answer_when_done(ctx, request.timeout_ms, changes, answer)


def _may(ctx: RequestContext, operation: AclOperation, name: str) -> bool:
    """DELETE on the cluster allows deleting and describing every topic (Kafka's ControllerApis.deleteTopics)."""
    return ctx.authorize(AclOperation.DELETE, log_denied=False) or ctx.authorize(operation, ResourceType.TOPIC, name)


def _resolve(ctx: RequestContext, wanted: DeleteTopicsRequest.DeleteTopicState) -> tuple[bytes, str]:
    """The (id, name) of the topic an entry names."""
    if wanted.name is None and wanted.topic_id == UUID_ZERO:
        raise InvalidRequestError("Neither topic name nor id were specified.")
    if wanted.name is not None and wanted.topic_id != UUID_ZERO:
        raise InvalidRequestError("You may not specify both topic name and topic id.")
    metadata = ctx.broker.metadata
    if wanted.name is None:
        topic = metadata.topic_by_id(wanted.topic_id)
        if topic is None:
            raise UnknownTopicIdError()
    else:
        topic = metadata.topic(wanted.name)
        if topic is None:
            raise UnknownTopicOrPartitionError()
    return topic.topic_id, topic.name


def _delete(ctx: RequestContext, name: str) -> KafkaError | None:
    try:
        ctx.broker.controller.delete_topic(name)
    except KafkaError as exc:
        return exc
    log.info("Deleting topic %s at the request of %s", name, ctx.client)
    return None



def _result(name: str | None, topic_id: bytes, error: KafkaError | None) -> _Result:
    """A result; the id and message reach only the versions that carry them (both fields are ignorable)."""
    result = _Result(topic_id=topic_id, error_code=error.code if error else ErrorCode.NONE,
                     error_message=str(error) if error else None)
    result.name = name  # null for a topic named only by an unknown or duplicate id (v6+)
    return result


serve(API_KEY, handle)
