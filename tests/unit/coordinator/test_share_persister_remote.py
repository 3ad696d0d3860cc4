"""The remote persister's stop (coordinator/share_persister_remote.py): a call still retrying gives up at once when
the broker shuts down, and none starts afterwards (Kafka's persister stop in BrokerServer.shutdown)."""

from __future__ import annotations

import threading
import time

import pytest

from wirebroker.coordinator.share_persister_remote import RemoteStatePersister
from wirebroker.protocol.errors import CoordinatorNotAvailableError

KEY = ("group", bytes(16), 0)


def _persister() -> RemoteStatePersister:
    # no inter-broker endpoint yet: every attempt is retried after its back-off (1 s, then 2, 4, 8)
    return RemoteStatePersister(lambda: None, "share-persister-test", 30_000)


def test_a_call_retrying_gives_up_when_the_broker_shuts_down():
    persister = _persister()
    raised: list[BaseException] = []

    def read() -> None:
        try:
            persister.read(KEY)
        except BaseException as exc:  # noqa: BLE001  (the thread hands what it raised to the test)
            raised.append(exc)

    caller = threading.Thread(target=read)
    caller.start()
    time.sleep(0.2)  # in its first back-off
    started = time.monotonic()
    persister.shutdown()
    caller.join(5)
    assert not caller.is_alive() and time.monotonic() - started < 1
    assert len(raised) == 1 and isinstance(raised[0], CoordinatorNotAvailableError)


def test_no_call_starts_once_it_is_stopped():
    persister = _persister()
    persister.shutdown()
    with pytest.raises(CoordinatorNotAvailableError, match="shutting down"):
        persister.read(KEY)
