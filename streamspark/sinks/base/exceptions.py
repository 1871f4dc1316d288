"""Sink errors."""

from __future__ import annotations

from typing import Any

from ...exceptions import StreamsparkException

__all__ = ("SinkBackpressureError",)


class SinkBackpressureError(StreamsparkException):
    """Raised by a sink that wants the current batch retried later.

    The application drops the sink's pending batch (``on_paused``), waits ``retry_after``
    seconds and feeds the same records to the sink again; nothing is committed meanwhile,
    so nothing is lost.

    :param retry_after: seconds to wait before the batch is retried (kept as given).

    >>> err = SinkBackpressureError(5)
    >>> err.retry_after, err.args, str(err)
    (5, (5,), '5')
    >>> SinkBackpressureError(retry_after=5).args  # as Quix Streams: only positional arguments
    ()
    """

    def __init__(self, retry_after: float) -> None:  # args: what the call passed by position
        self.retry_after = retry_after

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.retry_after,))
