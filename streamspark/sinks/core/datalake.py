"""Alias module: ``from streamspark.sinks.core.datalake import TSDataLakeSink`` (see :mod:`streamspark.sinks.datalake`)."""

from ..datalake import QuixTSDataLakeSink, StreamTimeoutTracker, TSDataLakeSink

__all__ = ("TSDataLakeSink", "QuixTSDataLakeSink", "StreamTimeoutTracker")
