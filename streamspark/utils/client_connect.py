"""The connect callbacks of sinks and sources (``on_client_connect_success/failure``) and
their defaults: success logs, failure logs and re-raises.

>>> connected()
>>> failed_to_connect(None)  # nothing to re-raise
>>> failed_to_connect(ConnectionError("refused"))
Traceback (most recent call last):
...
ConnectionError: refused
"""

from __future__ import annotations

import logging
from typing import Callable, Optional

__all__ = ("ClientConnectSuccessCallback", "ClientConnectFailureCallback", "connected", "failed_to_connect")

logger = logging.getLogger(__name__)

ClientConnectSuccessCallback = Callable[[], None]
ClientConnectFailureCallback = Callable[[Optional[Exception]], None]


def connected() -> None:
    """The default success callback: a debug line."""
    logger.debug("Connected to the client")


def failed_to_connect(exception: Optional[Exception]) -> None:
    """The default failure callback: log the exception and raise it again."""
    logger.error("Failed to connect to the client: %s", exception)
    if exception is not None:
        raise exception
