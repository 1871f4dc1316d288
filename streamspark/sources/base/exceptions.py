"""Errors of sources: a failed source process, a producer that did not flush, unreadable input.

>>> err = SourceException("boom", source_name="ticks", pid=12, exitcode=1)
>>> str(err)
'Source "ticks" (PID 12) failed with exit code 1: boom'
>>> str(SourceInputError("readings", "data.csv line 3", "4 fields, the header has 3"))
'Source "readings" cannot read data.csv line 3: 4 fields, the header has 3'
"""

from __future__ import annotations

from typing import Any, Optional

from ...checkpointing.exceptions import CheckpointProducerTimeout
from ...exceptions import StreamsparkException

__all__ = ("SourceException", "SourceInputError", "CheckpointProducerTimeout")


class SourceException(StreamsparkException):
    """Raised in the application's process when a source's process ended with an error.

    The message names the source and, when the source raised, carries the exception and its
    traceback as printed in the source's process (``child_traceback``). When the exception
    could be sent over, it is also chained as ``__cause__``.

    :param message: what went wrong.
    :param source_name: the failing source (its ``repr``; a ``Source``'s name).
    :param pid: the source's process id.
    :param exitcode: the process's exit code (negative: killed by that signal).
    :param child_traceback: the traceback printed in the source's process, if any.
    """

    def __init__(
        self,
        message: str,
        *,
        source_name: str,
        pid: Optional[int] = None,
        exitcode: Optional[int] = None,
        child_traceback: Optional[str] = None,
    ) -> None:
        self.message = message
        self.source_name = source_name
        self.pid = pid
        self.exitcode = exitcode
        self.child_traceback = child_traceback
        super().__init__(self._render())

    def _render(self) -> str:
        head = f'Source "{self.source_name}"'
        if self.pid is not None:
            head += f" (PID {self.pid})"
        head += " failed"
        if self.exitcode:
            head += f" with exit code {self.exitcode}"
        text = f"{head}: {self.message}"
        if self.child_traceback:
            text += "\n\nIn the source's process:\n" + self.child_traceback.rstrip()
        return text

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild_source_exception, (self.message, self.source_name, self.pid, self.exitcode, self.child_traceback))


def _rebuild_source_exception(
    message: str, source_name: str, pid: Optional[int], exitcode: Optional[int], child_traceback: Optional[str]
) -> SourceException:
    return SourceException(message, source_name=source_name, pid=pid, exitcode=exitcode, child_traceback=child_traceback)


class SourceInputError(StreamsparkException):
    """A source cannot read or parse one of its items (a file, a row, a record).

    :param source_name: the source's name.
    :param item: what could not be read, e.g. ``"data.csv line 7"``.
    :param reason: why.
    """

    def __init__(self, source_name: str, item: str, reason: str) -> None:
        super().__init__(f'Source "{source_name}" cannot read {item}: {reason}')
        self.source_name = source_name
        self.item = item
        self.reason = reason

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.source_name, self.item, self.reason))
