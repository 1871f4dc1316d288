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

_FORMAT = "[%(asctime)s] [%(levelname)s] [%(name)s] : %(message)s"
_FORMAT_PID = "[%(asctime)s] [%(levelname)s] [%(name)s] [%(process)d] : %(message)s"


def configure_logging(
    loglevel: Optional[Union[int, LogLevel]],
    name: str = LOGGER_NAME,
    pid: bool = False,
) -> bool:
    """Attach a stderr handler to the library logger.

    :param loglevel: a level name or number; ``None`` leaves logging untouched.
    :param name: the logger to configure.
    :param pid: include the process id in each line.
    :returns: True when a handler was installed, False when nothing changed
        (``loglevel`` is None, or the logger already has handlers).
    """
    if loglevel is None:
        return False
    log = logging.getLogger(name)
    if log.handlers:
        return False
    handler = logging.StreamHandler(stream=sys.stderr)
    handler.setFormatter(logging.Formatter(_FORMAT_PID if pid else _FORMAT))
    log.addHandler(handler)
    log.setLevel(loglevel)
    log.propagate = False
    return True
