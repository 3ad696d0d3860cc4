"""The broker's log levels as Kafka's BROKER_LOGGER config resource shows and changes them (KIP-412).

Kafka lists its log4j loggers with their levels and lets IncrementalAlterConfigs SET a logger's level or DELETE it
(back to the root logger's level); changes last until restart. Here the loggers are Python's: "root" and every
logger of this package, with Python's levels under Kafka's names (WARNING is WARN, CRITICAL is FATAL).
"""

from __future__ import annotations

import logging

from wirebroker.protocol.errors import InvalidConfigError, InvalidRequestError

ROOT_LOGGER = "root"
PACKAGE = "wirebroker"

# Kafka's valid levels (LogLevelConfig.VALID_LOG_LEVELS, in its order) -> Python levels; TRACE is DEBUG here.
LEVELS = {
    "FATAL": logging.CRITICAL,
    "ERROR": logging.ERROR,
    "WARN": logging.WARNING,
    "INFO": logging.INFO,
    "DEBUG": logging.DEBUG,
    "TRACE": logging.DEBUG,
}
_NAMES = {logging.DEBUG: "DEBUG", logging.INFO: "INFO", logging.WARNING: "WARN", logging.ERROR: "ERROR",
          logging.CRITICAL: "FATAL"}


def logger_levels() -> dict[str, str]:
    """Logger name -> effective level name, root first, then this package's loggers by name."""
    names = sorted(n for n, lg in logging.root.manager.loggerDict.items()
                   if isinstance(lg, logging.Logger) and (n == PACKAGE or n.startswith(PACKAGE + ".")))
    levels = {ROOT_LOGGER: _level_name(logging.getLogger())}
    levels.update((name, _level_name(logging.getLogger(name))) for name in names)
    return levels


def _level_name(logger: logging.Logger) -> str:
    level = logger.getEffectiveLevel()
    return _NAMES.get(level, logging.getLevelName(level))


def _logger(name: str) -> logging.Logger:
    if name == ROOT_LOGGER:
        return logging.getLogger()
    if name not in logger_levels():
        raise InvalidConfigError(f"Logger {name} does not exist!")
    return logging.getLogger(name)


def check_level_change(name: str, level: str | None) -> None:
    """Raise what Kafka's RuntimeLoggerManager raises for a change it refuses (unknown logger or level, unsetting
    the root logger); `level` None means DELETE."""
    _logger(name)
    if level is None:
        if name == ROOT_LOGGER:
            raise InvalidRequestError(f"Removing the log level of the {ROOT_LOGGER} logger is not allowed")
    elif level not in LEVELS:
        raise InvalidConfigError(f"Cannot set the log level of {name} to {level} as it is not a supported log "
                                 f"level. Valid log levels are {', '.join(LEVELS)}")


def change_level(name: str, level: str | None) -> None:
    """SET a logger's level, or DELETE it (None) so it follows its parent again; check_level_change first."""
    _logger(name).setLevel(logging.NOTSET if level is None else LEVELS[level])
