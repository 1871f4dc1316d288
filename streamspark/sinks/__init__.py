"""Sinks: where processed records go.

>>> from streamspark.sinks import ListSink, CSVSink, BatchingSink, SinkBackpressureError
"""

from typing import Any

from .base import BaseSink, BatchingSink, SinkBackpressureError, SinkBatch, SinkItem
from .base.sink import ClientConnectFailureCallback, ClientConnectSuccessCallback
from .core import CSVSink, ListSink

__all__ = (
    "BaseSink",
    "BatchingSink",
    "SinkBatch",
    "SinkItem",
    "SinkBackpressureError",
    "ClientConnectSuccessCallback",
    "ClientConnectFailureCallback",
    "ListSink",
    "CSVSink",
    "InfluxDB3Sink",
)


def __getattr__(name: str) -> Any:
    if name == "InfluxDB3Sink":  # on first use (see streamspark.sinks.core)
        from .core import InfluxDB3Sink

        return InfluxDB3Sink
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
