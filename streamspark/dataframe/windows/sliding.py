"""Sliding time windows: ``sdf.sliding_window(...)`` → an aggregation → a :class:`SlidingWindow`.

>>> from streamspark.dataframe import StreamingDataFrame
>>> from streamspark.models import Topic
>>> isinstance(StreamingDataFrame(Topic("t")).sliding_window(duration_ms=10).count(), SlidingWindow)
True
"""

from __future__ import annotations

from .time_based import TimeWindow

__all__ = ("SlidingWindow",)


class SlidingWindow(TimeWindow):
    """A sliding time window: one window per record, ``[timestamp - duration, timestamp]``,
    emitted when its contents change (``"key"`` closing strategy only)."""
