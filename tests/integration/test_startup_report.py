"""What `wirebroker` prints once ready (issue 15 item 6): a line per listener, and what it loaded from its data."""

from __future__ import annotations

import time

import wirebroker
from tests.integration.broker_process import BrokerProcess

DETAILS_WAIT_S = 10.0  # the details follow the ready line that BrokerProcess waits for


def printed(broker: BrokerProcess, start: int, needle: str) -> str:
    """The line (after byte `start` of the log) that contains `needle`, waiting for it."""
    deadline = time.monotonic() + DETAILS_WAIT_S
    while time.monotonic() < deadline:
        for line in broker.log_path.read_text(errors="replace")[start:].splitlines():
            if needle in line:
                return line
        time.sleep(0.05)
    raise AssertionError(f"no line with {needle!r} in:\n{broker.log_text()[start:]}")


def test_the_command_names_its_listeners_and_what_it_loaded(tmp_path):
    data = tmp_path / "data"
    with wirebroker.Broker(log_dirs=str(data), node_id=0) as embedded:
        embedded.create_topic("orders", partitions=2)
        embedded.create_topic("payments")
        embedded.produce("orders", [b"one", b"two"])
    broker = BrokerProcess(data).start()
    try:
        assert printed(broker, 0, "  listener ") == f"  listener PLAINTEXT (PLAINTEXT) on 127.0.0.1:{broker.port}"
        loaded = printed(broker, 0, "  loaded ")
        assert loaded.startswith("  loaded 3 partitions of 2 topics (3 segments) in ") and "unclean" not in loaded
        broker.kill()
        start = broker.log_path.stat().st_size
        broker.start()
        assert printed(broker, start, "  loaded ").endswith("(recovered after an unclean shutdown); groups and "
                                                            "transactions load in the background (logged when done)")
    finally:
        broker.stop()
