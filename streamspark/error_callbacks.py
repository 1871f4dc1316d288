"""Error callbacks: return True to skip the failing record, anything else stops the app."""

from __future__ import annotations

import logging
from typing import Any, Callable, Optional

__all__ = (
    "ConsumerErrorCallback",
    "ProcessingErrorCallback",
    "ProducerErrorCallback",
    "default_on_consumer_error",
    "default_on_processing_error",
    "default_on_producer_error",
)

#: on_consumer_error(exc, message, logger) -> bool
ConsumerErrorCallback = Callable[[Exception, Optional[Any], logging.Logger], bool]
#: on_processing_error(exc, row, logger) -> bool
ProcessingErrorCallback = Callable[[Exception, Optional[Any], logging.Logger], bool]
#: on_producer_error(exc, row, logger) -> bool
ProducerErrorCallback = Callable[[Exception, Optional[Any], logging.Logger], bool]


def default_on_consumer_error(exc: Exception, message: Optional[Any], logger: logging.Logger) -> bool:
    where = f" ({message!r})" if message is not None else ""
    logger.exception("Failed to consume a message%s: %s", where, exc, exc_info=exc)
    return False


def default_on_processing_error(exc: Exception, row: Optional[Any], logger: logging.Logger) -> bool:
    where = f" ({row!r})" if row is not None else ""
    logger.exception("Failed to process a record%s: %s", where, exc, exc_info=exc)
    return False


def default_on_producer_error(exc: Exception, row: Optional[Any], logger: logging.Logger) -> bool:
    where = f" ({row!r})" if row is not None else ""
    logger.exception("Failed to produce a message%s: %s", where, exc, exc_info=exc)
    return False
