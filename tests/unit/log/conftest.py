"""Fixtures for the log tests: logs opened in tmp_path and closed afterwards."""

from __future__ import annotations

import pytest

from wirebroker.log.config import LogConfig
from wirebroker.log.log import Log

from .helpers import NOW, small_config


@pytest.fixture
def partition_dir(tmp_path):
    return str(tmp_path / "topic-0")


@pytest.fixture
def open_log(partition_dir):
    """Open (or reopen) the test log; every log opened is closed at the end."""
    opened: list[Log] = []

    def _open(config: LogConfig | None = None, **kwargs: object) -> Log:
        kwargs.setdefault("now_ms", NOW)
        log_ = Log.open(partition_dir, config or small_config(), **kwargs)
        opened.append(log_)
        return log_

    yield _open
    for log_ in opened:
        log_.close()
