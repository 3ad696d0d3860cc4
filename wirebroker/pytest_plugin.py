"""pytest fixtures that give a test a wirebroker (the `pytest11` entry point `wirebroker` registers them).

Fixtures:
- `wirebroker`: a fresh broker for the test (embedded.Broker, started and torn down around it), configured by the
  ini options and then by `@pytest.mark.wirebroker(num_partitions=3, process=True, ...)` on the test, its class
  or its module (the nearest marker wins for a key it names).
- `wirebroker_session`: one broker for the whole session, configured by the ini options only (tests share it);
  fault rules a test sets on it end with the test.
- `wirebroker_topic_prefix`: a prefix of the test's own for names on the shared broker (topics, groups,
  transactional ids), so tests neither see nor disturb each other's.
- `wirebroker_topic`: a topic of the test's own on `wirebroker_session`, with the marker's num_partitions if it
  names one, else the broker's.

ini options: `wirebroker_mode = thread | process` (in this process on threads, the default, or as a child process)
and `wirebroker_config`, one `key=value` line per server.properties key, for every broker the fixtures start.

pytest loads this module in every session once wirebroker is installed, the project's own included: it imports
nothing but pytest here, and a broker starts only for a test that asks for one of the fixtures.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from wirebroker.embedded import Broker

MODES = ("thread", "process")
MARKER = "wirebroker"
TOPIC_NAME_MAX = 249  # Kafka's limit on a topic's name
_ILLEGAL_IN_TOPIC = re.compile(r"[^a-zA-Z0-9._-]+")  # Kafka's legal characters are these


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addini("wirebroker_mode", "wirebroker fixtures: 'thread' (in this process) or 'process' (a child)",
                  default="thread")
    parser.addini("wirebroker_config", "wirebroker fixtures: server.properties keys, one key=value a line",
                  type="linelist", default=[])


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", f"{MARKER}(**config): configure the test's `wirebroker` fixture "
                                       "(server.properties keys with underscores for dots; process=True)")


@pytest.fixture
def wirebroker(request: pytest.FixtureRequest) -> Iterator[Broker]:
    """A fresh broker for this test, ready; stopped and its data deleted after it."""
    with _broker(request.config, _marker_config(request)) as broker:
        yield broker


@pytest.fixture(scope="session")
def wirebroker_session(request: pytest.FixtureRequest) -> Iterator[Broker]:
    """One broker for the session: use `wirebroker_topic` or `wirebroker_topic_prefix` for names of the test's own."""
    with _broker(request.config, {}) as broker:
        yield broker


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_teardown(item: pytest.Item) -> None:
    """Fault rules a test set on the session's broker end with the test, so they never reach the next one."""
    broker = getattr(item, "funcargs", {}).get("wirebroker_session")
    if broker is not None and (broker.server is not None or broker.http_url):
        broker.faults.clear()


@pytest.fixture
def wirebroker_topic_prefix(request: pytest.FixtureRequest) -> str:
    """`<test name>-<8 random hex digits>-`: unique to this test in any session."""
    name = _ILLEGAL_IN_TOPIC.sub("_", request.node.name)[:TOPIC_NAME_MAX - 40]
    return f"{name}-{os.urandom(4).hex()}-"


@pytest.fixture
def wirebroker_topic(wirebroker_session: Broker, wirebroker_topic_prefix: str, request: pytest.FixtureRequest) -> str:
    """The name of a topic created for this test on the session's broker."""
    partitions = _marker_config(request).get("num_partitions", wirebroker_session.props.get("num.partitions", 1))
    name = f"{wirebroker_topic_prefix}topic"
    wirebroker_session.create_topic(name, partitions=int(partitions))
    return name


def _broker(config: pytest.Config, keywords: dict[str, Any]) -> Broker:
    mode = config.getini("wirebroker_mode")
    if mode not in MODES:
        raise pytest.UsageError(f"wirebroker_mode = {mode!r}: it is one of {', '.join(MODES)}")
    # Here, not at the top: a session that starts no broker never loads the broker's modules.
    from wirebroker.embedded import Broker

    ini_keywords = {}
    for line in config.getini("wirebroker_config"):
        key, sep, value = line.partition("=")
        if not sep:
            raise pytest.UsageError(f"wirebroker_config: {line!r} is not of the form key=value")
        ini_keywords[key.strip().replace(".", "_")] = value.strip()
    return Broker(**{"process": mode == "process", **ini_keywords, **keywords})


def _marker_config(request: pytest.FixtureRequest) -> dict[str, Any]:
    """The keywords of the wirebroker markers on the test, its class and module; the nearest wins."""
    keywords: dict[str, Any] = {}
    for marker in reversed(list(request.node.iter_markers(MARKER))):
        if marker.args:
            raise pytest.UsageError(f"@pytest.mark.{MARKER} takes keywords only, not {marker.args!r}")
        keywords.update(marker.kwargs)
    return keywords
