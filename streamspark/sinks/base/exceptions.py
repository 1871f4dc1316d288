"""Sink errors."""

from __future__ import annotations

from ...exceptions import StreamsparkException

__all__ = ("SinkBackpressureError",)


class SinkBackpressureError(StreamsparkException):
    """Raised by a sink that wants the current batch retried later.

    The application drops the sink's pending batch (``on_paused``), waits ``retry_after``
    seconds and feeds the same records to the sink again; nothing is committed meanwhile,
    so nothing is lost.

    :param retry_after: seconds to wait before the batch is retried.
    """

    def __init__(self, retry_after: float) -> None:
        self.retry_after = float(retry_after)
        super().__init__(f"Sink requested backpressure, retry after {self.retry_after}s")
