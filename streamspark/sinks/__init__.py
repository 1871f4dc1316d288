"""Sinks: where processed records go.

>>> from streamspark.sinks import ListSink, CSVSink, BatchingSink, SinkBackpressureError
"""

from .base import BaseSink, BatchingSink, SinkBackpressureError, SinkBatch, SinkItem
from .core import CSVSink, InfluxDB3Sink, ListSink

__all__ = (
    "BaseSink",
    "BatchingSink",
    "SinkBatch",
    "SinkItem",
    "SinkBackpressureError",
    "ListSink",
    "CSVSink",
    "InfluxDB3Sink",
)
