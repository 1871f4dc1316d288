"""Sink errors."""

from __future__ import annotations

from ...exceptions import StreamsparkException

__all__ = ("SinkBackpressureError",)


class SinkBackpressureError(StreamsparkException):
    """Raised by a sink that wants the current batch retried later.

    The application drops the sink's pending batch (``on_paused``), waits ``retry_after``
    seconds and feeds the same records to the sink again; nothing is committed meanwhile,
    so nothing is lost.

    :param retry_after: seconds to wait before the batch is retried (kept as given).

    >>> err = SinkBackpressureError(retry_after=5)
    >>> err.retry_after, str(err)
    (5, '5')
    """

    def __init__(self, retry_after: float) -> None:
        super().__init__(retry_after)
        self.retry_after = retry_after
