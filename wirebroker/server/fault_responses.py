"""An injected error code, answered where the protocol carries it (fault injection, server/faults.py).

Kafka carries most errors of the data APIs per partition (Produce, Fetch, ListOffsets, OffsetCommit, DeleteRecords,
OffsetForLeaderEpoch, TxnOffsetCommit) or per topic (CreateTopics, DeleteTopics, Metadata), and the rest at the top
level. The shape of each API is read once from its generated classes: a request list whose items name a topic
(`name`, `topic` or `topic_id`) and hold a list of partitions (`partition_index`, `index` or `partition`), and the
response list that answers it, whose partitions (or topics) have an `error_code`. An API of another shape (groups,
transactions, OffsetFetch) gets the code at the top level.

A rule may match only some partitions of a request: those are taken out of the request before its handler runs,
and their error entries are added to the handler's answer (`split` then `merge`), so the rest is served as usual.
Fetch and Metadata are served whole and the matched entries of the answer replaced (`merge` alone): a fetch session
must keep every partition the client believes it holds, and Metadata's answer carries the brokers a client needs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from wirebroker.protocol.api_messages import request_class, response_class
from wirebroker.protocol.message import Message

TOPIC_KEYS = ("name", "topic", "topic_id")  # how a request or response item names its topic
PARTITION_KEYS = ("partition_index", "index", "partition")  # how an item names its partition
# Kafka answers an error with these at INVALID_OFFSET / NO_TIMESTAMP (-1), not at the schema's 0 (Produce's
# base_offset, Fetch's high_watermark, ListOffsets' offset and timestamp).
INVALID_ON_ERROR = ("base_offset", "high_watermark", "offset", "timestamp")
_LIST_OF = re.compile(r"list\[(\w+)\.(\w+)\]")


@dataclass(frozen=True, slots=True)
class Shape:
    """Where an API's request names topics and partitions and where its response carries their error codes."""

    request_topics: str  # field of the request: the list of topics
    request_partitions: str | None  # field of a request topic: its partitions (None: the API works per topic)
    response_topics: str
    topic_class: type
    response_partitions: str | None
    partition_class: type | None


@dataclass(slots=True)
class Targets:
    """What a rule matched in one request: (request topic, matched partitions) pairs; `partial` if the request
    also holds topics or partitions the rule does not match."""

    topics: list[tuple[Any, list[Any]]] = field(default_factory=list)
    partial: bool = False


def _struct_lists(cls: type) -> dict[str, type]:
    """The fields of a generated class that are lists of structs, with the struct's class."""
    owner = __import__(cls.__module__, fromlist=["_"])
    lists = {}
    for name, annotation in cls.__init__.__annotations__.items():
        match = _LIST_OF.match(annotation)
        if match:
            lists[name] = getattr(getattr(owner, match.group(1)), match.group(2))
    return lists


def _first(cls: type, keys: tuple[str, ...]) -> str | None:
    return next((key for key in keys if key in cls.__slots__), None)


def _topic_list(cls: type, with_error: bool, per_partition: bool) -> tuple[str, type, str | None, type | None] | None:
    """The first list of topic items in `cls` (their partitions' list too, `per_partition`), whose items carry an
    error code (`with_error`): (field, item class, partitions field, partition class)."""
    for name, item in _struct_lists(cls).items():
        if _first(item, TOPIC_KEYS) is None:
            continue
        if not per_partition:
            if not with_error or "error_code" in item.__slots__:
                return name, item, None, None
            continue
        for partitions, partition in _struct_lists(item).items():
            if _first(partition, PARTITION_KEYS) and (not with_error or "error_code" in partition.__slots__):
                return name, item, partitions, partition
    return None


@cache
def shape_of(api_key: int) -> Shape | None:
    """The API's topic/partition shape, or None when its errors go at the top level: per partition where both the
    request and the response list partitions, else per topic."""
    for per_partition in (True, False):
        request = _topic_list(request_class(api_key), with_error=False, per_partition=per_partition)
        response = _topic_list(response_class(api_key), with_error=True, per_partition=per_partition)
        if request is not None and response is not None:
            return Shape(request[0], request[2], response[0], response[1], response[2], response[3])
    return None


def topic_name(item: Any, name_of_id: Any) -> str | None:
    """A request topic's name; by id (Fetch v13+) through `name_of_id`."""
    name = getattr(item, "name", None) or getattr(item, "topic", None)
    if not name and getattr(item, "topic_id", None):
        return name_of_id(item.topic_id)
    return name


def match(shape: Shape | None, body: Message, topic: str | None, partition: int | None,
          name_of_id: Any) -> Targets | None:
    """The topics and partitions of `body` a rule's filters select; None if none (or the API names no topics
    and the rule filters by one)."""
    if shape is None:
        return None if topic is not None or partition is not None else Targets()
    targets = Targets()
    for item in getattr(body, shape.request_topics) or ():  # Metadata's None: every topic
        if topic is not None and topic_name(item, name_of_id) != topic:
            targets.partial = True
            continue
        if shape.request_partitions is None:
            if partition is None:
                targets.topics.append((item, []))
            continue
        chosen = [p for p in getattr(item, shape.request_partitions)
                  if partition is None or getattr(p, _first(type(p), PARTITION_KEYS)) == partition]
        if len(chosen) < len(getattr(item, shape.request_partitions)):
            targets.partial = True
        if chosen:
            targets.topics.append((item, chosen))
    if not targets.topics and (topic is not None or partition is not None):
        return None
    return targets


def error_answer(api_key: int, targets: Targets, code: int) -> Message | None:
    """The response carrying `code` for the targets (per partition or topic), else at the top level; None when
    the response has nowhere to carry it."""
    shape = shape_of(api_key)
    response = response_class(api_key)()
    if shape is None or not targets.topics:
        if not hasattr(response, "error_code"):
            return None
        response.error_code = code
        return response
    answered = getattr(response, shape.response_topics)
    for item, partitions in targets.topics:
        answer = _name_topic(item, shape.topic_class())
        if shape.response_partitions is None:
            _set_error(answer, code)
        else:
            getattr(answer, shape.response_partitions).extend(
                _set_error(_name_partition(p, shape.partition_class()), code) for p in partitions)
        answered.append(answer)
    return response


def split(api_key: int, body: Message, targets: Targets) -> None:
    """Take the targets out of the request, so that its handler serves only the rest."""
    shape = shape_of(api_key)
    chosen = {id(item): {id(p) for p in partitions} for item, partitions in targets.topics}
    kept = []
    for item in getattr(body, shape.request_topics) or ():  # Metadata's None: every topic
        if id(item) in chosen and shape.request_partitions is not None:
            rest = [p for p in getattr(item, shape.request_partitions) if id(p) not in chosen[id(item)]]
            setattr(item, shape.request_partitions, rest)
            if rest:
                kept.append(item)
        elif id(item) not in chosen:
            kept.append(item)
    setattr(body, shape.request_topics, kept)


def merge(api_key: int, answer: Any, injected: Message) -> Any:
    """The handler's answer with the injected error entries in it, each replacing the handler's entry for the same
    topic or partition, if any (an answer that is no response is kept)."""
    shape = shape_of(api_key)
    if not isinstance(answer, type(injected)):
        return answer
    topics = getattr(answer, shape.response_topics)
    for item in getattr(injected, shape.response_topics):
        same = next((i for i, t in enumerate(topics) if _topic_key(t) == _topic_key(item)), None)
        if same is None:
            topics.append(item)
        elif shape.response_partitions is None:
            topics[same] = item
        else:
            injected_partitions = getattr(item, shape.response_partitions)
            replaced = {_partition_key(p) for p in injected_partitions}
            kept = [p for p in getattr(topics[same], shape.response_partitions) if _partition_key(p) not in replaced]
            setattr(topics[same], shape.response_partitions, kept + injected_partitions)
    return answer


def _topic_key(item: Any) -> Any:
    """A response topic's id when it has one (Fetch v13+), else its name."""
    topic_id = getattr(item, "topic_id", None)
    if topic_id and any(topic_id):
        return topic_id
    return getattr(item, "name", None) or getattr(item, "topic", None)


def _partition_key(item: Any) -> int:
    return getattr(item, _first(type(item), PARTITION_KEYS))


def _name_topic(source: Any, target: Any) -> Any:
    """Name the answer's topic as the request named it (by id too, for Fetch v13+)."""
    for key in TOPIC_KEYS:
        if key in type(target).__slots__ and key in type(source).__slots__:
            setattr(target, key, getattr(source, key))
    name = getattr(source, "name", None) or getattr(source, "topic", None)
    for key in ("name", "topic"):
        if key in type(target).__slots__ and key not in type(source).__slots__ and name is not None:
            setattr(target, key, name)
    return target


def _name_partition(source: Any, target: Any) -> Any:
    """The partition index, whatever each side calls it (Fetch's `partition` is answered in `partition_index`)."""
    setattr(target, _first(type(target), PARTITION_KEYS), getattr(source, _first(type(source), PARTITION_KEYS)))
    return target


def _set_error(item: Any, code: int) -> Any:
    item.error_code = code
    for key in INVALID_ON_ERROR:
        if key in type(item).__slots__:
            setattr(item, key, -1)
    return item
