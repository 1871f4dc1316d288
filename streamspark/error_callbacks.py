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


def _log_failure(what: str, source: Optional[Any], exc: Exception, logger: logging.Logger) -> bool:
    """Log ``Failed to <what>: partition="<topic>[<partition>]" offset="<offset>"`` and return False.

    ``source`` is a raw message (``message.topic()``...), a row (``row.topic``...) or None.
    """
    where = []
    for name in ("topic", "partition", "offset"):
        value = getattr(source, name, None) if source is not None else None
        where.append(value() if callable(value) else value)
    topic, partition, offset = where
    logger.exception('Failed to %s: partition="%s[%s]" offset="%s"', what, topic, partition, offset, exc_info=exc)
    return False


def default_on_consumer_error(exc: Exception, message: Optional[Any], logger: logging.Logger) -> bool:
    """Log the failure with the message's partition and offset; stop the app."""
    return _log_failure("consume a message from Kafka", message, exc, logger)


def default_on_processing_error(exc: Exception, row: Optional[Any], logger: logging.Logger) -> bool:
    """Log the failure with the row's partition and offset; stop the app."""
    return _log_failure("process a Row", row, exc, logger)


def default_on_producer_error(exc: Exception, row: Optional[Any], logger: logging.Logger) -> bool:
    """Log the failure with the row's partition and offset; stop the app."""
    return _log_failure("produce a message to Kafka", row, exc, logger)
