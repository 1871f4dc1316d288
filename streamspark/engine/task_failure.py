"""What stops a task: an unhandled error with where it happened, and the error callbacks' say.

A task never lets a record error escape as a Spark failure. The first unhandled error becomes a
:class:`TaskFailure`, which the task turns into the ``TaskError`` of its summary.

>>> failure = TaskFailure(ValueError("bad"), Stage.PROCESSING, "readings", 0, 42)
>>> failure.offset, str(failure)
(42, 'bad')
"""

from __future__ import annotations

import logging
from typing import Any, Callable, Optional

from .summary import Stage

__all__ = ("TaskFailure", "skip_on_error")

logger = logging.getLogger(__name__)


class TaskFailure(Exception):
    """An unhandled error with where it happened."""

    def __init__(
        self, exc: BaseException, stage: Stage, topic: Optional[str], partition: Optional[int], offset: Optional[int]
    ) -> None:
        super().__init__(str(exc))
        self.exc = exc
        self.stage = stage
        self.topic = topic
        self.partition = partition
        self.offset = offset


def skip_on_error(
    callback: Callable[..., bool],
    exc: BaseException,
    row: Any,
    stage: Stage,
    topic: Optional[str],
    partition: Optional[int],
    offset: Optional[int],
) -> bool:
    """Ask an error callback whether to skip ``row``; an exception raised by the callback itself
    stops the task like the error it was asked about (its exception is the cause)."""
    try:
        return bool(callback(exc, row, logger))
    except Exception as callback_exc:
        raise TaskFailure(callback_exc, stage, topic, partition, offset) from callback_exc
