"""Fault injection (issue 15): rules a test sets to make the broker answer an error, answer late, not answer, or
close the connection, for chosen requests.

A rule selects requests by API (`api="Produce"` or its key), optionally its version, topic, partition and client id,
and does one thing to them:
- `error="NOT_LEADER_OR_FOLLOWER"` (a name or a code): answered where the protocol carries it, per partition or per
  topic for the matched ones only, else at the top level (fault_responses.py); the matched partitions never reach
  their handler (a produce is not appended), the others of the same request are served as usual;
- `drop=True`: the request is served but its answer never sent, so the client times out (a lost acknowledgement:
  a retried produce is appended twice unless the producer is idempotent);
- `close=True`: the connection is closed instead of serving the request;
- `delay_ms=N`: the answer (or, with `error` or `close`, the fault) goes out N ms later, sent from a timer thread;
  no handler thread waits.
It fires for the next `count` matching requests (None: every one) and, with `share` below 1, for that share of
them at random (`seed` makes the draw repeatable). The first rule that fires wins; each counts how often it fired.

The dispatcher calls `dispatch` only while a rule is set (`Dispatcher.faults` is None otherwise), so a broker with
no rules pays one attribute check per request. Rules come from `wirebroker.Broker().faults` in this process, or as
JSON over the HTTP port (`POST /faults` with the same fields, `GET /faults`, `DELETE /faults`) from any language.
"""

from __future__ import annotations

import logging
import random
import threading
from dataclasses import dataclass
from itertools import count as counter
from typing import Any
from weakref import WeakKeyDictionary

from wirebroker.apis.registry import Api
from wirebroker.network.request_channel import Request, Response
from wirebroker.protocol.api_messages import request_class
from wirebroker.protocol.error_codes import ErrorCode
from wirebroker.protocol.headers import RequestHeader, read_request_header
from wirebroker.protocol.message import Message
from wirebroker.protocol.messages import API_SPECS
from wirebroker.server import fault_responses
from wirebroker.server.dispatch import Dispatcher

log = logging.getLogger(__name__)

# Served whole, the injected entries replacing the matched ones (fault_responses.py says why): Fetch, Metadata.
SERVED_WHOLE = frozenset({1, 3})
RULE_FIELDS = ("api", "version", "topic", "partition", "client_id", "error", "delay_ms", "drop", "close", "count",
               "share", "seed")


class FaultRuleError(ValueError):
    """A rule that cannot be set; the message names the field."""


@dataclass(slots=True, eq=False)
class FaultRule:
    id: int
    api_key: int | None
    version: int | None
    topic: str | None
    partition: int | None
    client_id: str | None
    error: int | None
    delay_ms: int
    drop: bool
    close: bool
    count: int | None  # how many more times it fires; None: always
    share: float
    random: random.Random
    fired: int = 0

    def matches_header(self, header: RequestHeader) -> bool:
        return ((self.api_key is None or header.api_key == self.api_key)
                and (self.version is None or header.api_version == self.version)
                and (self.client_id is None or header.client_id == self.client_id)
                and (self.count is None or self.count > 0))

    def draw(self) -> bool:
        """Whether it fires for one more matching request (counted when it does)."""
        if self.share < 1 and self.random.random() >= self.share:
            return False
        self.fired += 1
        if self.count is not None:
            self.count -= 1
        return True

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "api": API_SPECS[self.api_key].name if self.api_key is not None else None,
            "version": self.version, "topic": self.topic, "partition": self.partition, "client_id": self.client_id,
            "error": ErrorCode(self.error).name if self.error is not None else None,
            "delay_ms": self.delay_ms, "drop": self.drop, "close": self.close,
            "remaining": self.count, "share": self.share, "fired": self.fired,
        }


def parse_rule(rule_id: int, fields: dict[str, Any]) -> FaultRule:
    """A rule from the Python API's keywords or the HTTP port's JSON object; FaultRuleError names a bad field."""
    unknown = sorted(set(fields) - set(RULE_FIELDS))
    if unknown:
        raise FaultRuleError(f"unknown fault field(s) {', '.join(unknown)}; the fields are {', '.join(RULE_FIELDS)}")
    error = _error_code(fields.get("error"))
    drop, close = bool(fields.get("drop", False)), bool(fields.get("close", False))
    delay_ms = _int(fields, "delay_ms", 0, minimum=0)
    if (error is not None) + drop + close > 1:
        raise FaultRuleError("a fault is one of error, drop or close (delay_ms may go with error or close)")
    if error is None and not drop and not close and not delay_ms:
        raise FaultRuleError("a fault needs error, drop, close or delay_ms")
    share = float(fields.get("share", 1.0))
    if not 0 < share <= 1:
        raise FaultRuleError(f"share must be above 0 and at most 1, got {share}")
    return FaultRule(
        id=rule_id, api_key=_api_key(fields.get("api")), version=_int(fields, "version", None, minimum=0),
        topic=fields.get("topic"), partition=_int(fields, "partition", None, minimum=0),
        client_id=fields.get("client_id"), error=error, delay_ms=delay_ms, drop=drop, close=close,
        count=_int(fields, "count", None, minimum=1), share=share, random=random.Random(fields.get("seed")),
    )


def _int(fields: dict[str, Any], name: str, default: int | None, *, minimum: int) -> int | None:
    value = fields.get(name, default)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise FaultRuleError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return value


def _api_key(api: int | str | None) -> int | None:
    """An API by key or by name, as Kafka's schemas ("ListOffsets") or ApiKeys ("LIST_OFFSETS") spell it."""
    if api is None or (isinstance(api, int) and api in API_SPECS):
        return api
    wanted = str(api).replace("_", "").lower()
    for key, spec in API_SPECS.items():
        if spec.name.lower() == wanted:
            return key
    raise FaultRuleError(f"api {api!r} names no Kafka API (e.g. Produce, Fetch, JoinGroup, or a key number)")


def _error_code(error: int | str | None) -> int | None:
    if error is None:
        return None
    try:
        return ErrorCode(error) if isinstance(error, int) else ErrorCode[str(error).upper()]
    except (KeyError, ValueError):
        raise FaultRuleError(f"error {error!r} is not a Kafka error code name or number") from None


class FaultInjector:
    """The rules of one broker, installed on its dispatcher while there are any."""

    def __init__(self, dispatcher: Dispatcher) -> None:
        self._dispatcher = dispatcher
        self._lock = threading.Lock()
        self._rules: list[FaultRule] = []
        self._ids = counter(1)

    @classmethod
    def of(cls, dispatcher: Dispatcher) -> FaultInjector:
        """The broker's injector (one per dispatcher, made on first use)."""
        with _INJECTORS_LOCK:
            injector = _INJECTORS.get(dispatcher)
            if injector is None:
                injector = _INJECTORS[dispatcher] = cls(dispatcher)
            return injector

    # ---- the API tests use ------------------------------------------------------------------------------------

    def inject(self, **fields: Any) -> dict[str, Any]:
        """Add a rule (fields as in the module's docstring); its description with its id."""
        with self._lock:
            rule = parse_rule(next(self._ids), fields)
            self._rules.append(rule)
            self._dispatcher.faults = self
        log.info("fault injection: rule %d set: %s", rule.id, rule.to_json())
        return rule.to_json()

    def rules(self) -> list[dict[str, Any]]:
        """Every rule set since the last clear, with how often it fired and how many times it has left."""
        with self._lock:
            return [rule.to_json() for rule in self._rules]

    def clear(self) -> int:
        """Remove every rule (answers already delayed still go out); how many there were."""
        with self._lock:
            removed = len(self._rules)
            self._rules = []
            self._dispatcher.faults = None
        if removed:
            log.info("fault injection: %d rule(s) cleared", removed)
        return removed

    # ---- the dispatcher's hook --------------------------------------------------------------------------------

    def dispatch(self, dispatcher: Dispatcher, request: Request, header: RequestHeader, api: Api,
                 body: Message) -> Response | None:
        whole = _whole(request, header, body)
        fired = self._fire(header, whole, dispatcher)
        if fired is None:
            return dispatcher.handle(request, header, api, body)
        rule, targets = fired
        log.info("fault injection: rule %d fires on %s v%d from %s (client id %r)", rule.id,
                 API_SPECS[header.api_key].name, header.api_version, request.client_address, header.client_id)
        if rule.close:
            return self._later(rule, Response(request, None, close_connection=True))
        if rule.drop:
            return dispatcher.handle(request, header, api, body, finish=lambda answer: Response(request, None))
        if rule.error is None:
            return dispatcher.handle(request, header, api, body,
                                     finish=lambda answer: self._later(rule, dispatcher._response(request, header,
                                                                                                  answer)))
        return self._answer_error(dispatcher, rule, targets, request, header, api, body, whole)

    def _fire(self, header: RequestHeader, body: Message,
              dispatcher: Dispatcher) -> tuple[FaultRule, fault_responses.Targets] | None:
        shape = fault_responses.shape_of(header.api_key)
        with self._lock:
            for rule in self._rules:
                if not rule.matches_header(header):
                    continue
                targets = fault_responses.match(shape, body, rule.topic, rule.partition,
                                                lambda topic_id: _topic_name(dispatcher, topic_id))
                if targets is not None and rule.draw():
                    return rule, targets
        return None

    def _answer_error(self, dispatcher: Dispatcher, rule: FaultRule, targets: fault_responses.Targets,
                      request: Request, header: RequestHeader, api: Api, body: Message,
                      whole: Message) -> Response | None:
        injected = fault_responses.error_answer(header.api_key, targets, rule.error)
        if injected is None:
            log.warning("fault injection: rule %d: %s has no error field for %s; closing the connection instead",
                        rule.id, API_SPECS[header.api_key].name, ErrorCode(rule.error).name)
            return self._later(rule, Response(request, None, close_connection=True))
        if getattr(body, "acks", None) == 0:  # a produce with acks=0 is never answered, not even with an error
            return Response(request, None)
        served_whole = bool(targets.topics) and header.api_key in SERVED_WHOLE
        if not served_whole and not targets.partial:
            return self._later(rule, dispatcher._response(request, header, injected))
        if not served_whole:
            fault_responses.split(header.api_key, whole, targets)
            if body is not whole:  # read again, flat, for the handler
                body = type(body).decode(whole.encode(header.api_version), header.api_version)
        return dispatcher.handle(request, header, api, body, finish=lambda answer: self._later(
            rule, dispatcher._response(request, header, fault_responses.merge(header.api_key, answer, injected))))

    def _later(self, rule: FaultRule, response: Response) -> Response | None:
        """The response now, or after the rule's delay from a timer thread (None: nothing to send now)."""
        if not rule.delay_ms:
            return response
        timer = threading.Timer(rule.delay_ms / 1000, self._dispatcher.channel.send_response, (response,))
        timer.daemon = True
        timer.start()
        return None


def _topic_name(dispatcher: Dispatcher, topic_id: bytes) -> str | None:
    topic = dispatcher.broker.cluster_view.topic_by_id(topic_id)
    return topic.name if topic is not None else None


_INJECTORS: WeakKeyDictionary[Dispatcher, FaultInjector] = WeakKeyDictionary()
_INJECTORS_LOCK = threading.Lock()


def _whole(request: Request, header: RequestHeader, body: Message) -> Message:
    """The request as its full message, whose topics and partitions the rules match and split: a body the dispatcher
    read flat for its handler (Produce, codegen/flat.py) is read again whole (fault injection is for tests only)."""
    request_type = request_class(header.api_key)
    if isinstance(body, request_type):
        return body
    _, start = read_request_header(request.frame)
    return request_type.read(request.frame, start, header.api_version)[0]
