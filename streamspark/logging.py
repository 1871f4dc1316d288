"""Logging set-up for the ``streamspark`` logger.

>>> configure_logging("WARNING")  # doctest: +SKIP
True
"""

from __future__ import annotations

import logging
import sys
from typing import Literal, Optional, Union

__all__ = ("configure_logging", "LogLevel", "LOGGER_NAME", "logger")

LogLevel = Literal["CRITICAL", "ERROR", "WARNING", "INFO", "DEBUG", "NOTSET"]

#: The name of the library's logger.
LOGGER_NAME = "streamspark"

logger = logging.getLogger(LOGGER_NAME)


def _format(name: str, pid: bool) -> str:
    label = name.replace("%", "%%")  # a literal label, not a formatting field
    return f"[%(asctime)s] [%(levelname)s] [{label}]" + (" [%(process)d]" if pid else "") + " : %(message)s"


def configure_logging(
    loglevel: Optional[Union[int, LogLevel]],
    name: str = LOGGER_NAME,
    pid: bool = False,
) -> bool:
    """Attach a stderr handler to the library's ``streamspark`` logger.

    >>> configure_logging(None)   # no-op
    False

    :param loglevel: a level name or number; ``None`` leaves logging untouched.
    :param name: the log name included in each line (``[time] [LEVEL] [name] : message``); the
        library's logger is the one configured, whatever the name.
    :param pid: include the process id in each line.
    :returns: True when a handler was installed, False when nothing changed
        (``loglevel`` is None, or the logger already has handlers, e.g. a second call).
    """
    if loglevel is None:
        return False
    log = logging.getLogger(LOGGER_NAME)
    if log.handlers:
        return False
    handler = logging.StreamHandler(stream=sys.stderr)
    handler.setFormatter(logging.Formatter(_format(name, pid)))
    log.addHandler(handler)
    log.setLevel(loglevel)
    log.propagate = False
    return True
