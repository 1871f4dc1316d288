"""Sinks: where processed records go.

>>> from streamspark.sinks import ListSink, CSVSink, BatchingSink, SinkBackpressureError
"""

from .base import BaseSink, BatchingSink, SinkBackpressureError, SinkBatch, SinkItem
from .core import CSVSink, ListSink

__all__ = (
    "BaseSink",
    "BatchingSink",
    "SinkBatch",
    "SinkItem",
    "SinkBackpressureError",
    "ListSink",
    "CSVSink",
)
