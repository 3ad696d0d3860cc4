"""BROKER_LOGGER: Python loggers under Kafka's level names, changed and refused as Kafka does."""

from __future__ import annotations

import logging

import pytest

from wirebroker.apis import broker_loggers
from wirebroker.protocol.errors import InvalidConfigError, InvalidRequestError

NAME = "wirebroker.apis.test_logger"


@pytest.fixture
def a_logger():
    logger = logging.getLogger(NAME)
    yield logger
    logger.setLevel(logging.NOTSET)


def test_lists_root_and_package_loggers_with_kafka_level_names(a_logger):
    a_logger.setLevel(logging.WARNING)
    levels = broker_loggers.logger_levels()
    assert next(iter(levels)) == "root"
    assert levels[NAME] == "WARN"
    assert not any(name.startswith("kafka") for name in levels)


def test_set_and_delete_a_level(a_logger):
    broker_loggers.check_level_change(NAME, "DEBUG")
    broker_loggers.change_level(NAME, "DEBUG")
    assert broker_loggers.logger_levels()[NAME] == "DEBUG"
    broker_loggers.change_level(NAME, None)
    assert a_logger.level == logging.NOTSET


def test_refusals(a_logger):
    with pytest.raises(InvalidConfigError, match="Logger no.such.logger does not exist!"):
        broker_loggers.check_level_change("no.such.logger", "INFO")
    with pytest.raises(InvalidConfigError, match="Valid log levels are FATAL, ERROR, WARN, INFO, DEBUG, TRACE"):
        broker_loggers.check_level_change(NAME, "info")
    with pytest.raises(InvalidRequestError, match="Removing the log level of the root logger is not allowed"):
        broker_loggers.check_level_change("root", None)
