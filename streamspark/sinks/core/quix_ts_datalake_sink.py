"""The data lake sink under the reference's import path, for ported code.

>>> from streamspark.sinks.core.quix_ts_datalake_sink import QuixTSDataLakeSink

It is :class:`streamspark.sinks.datalake.TSDataLakeSink` (see :mod:`streamspark.sinks.datalake`).
"""

from ..datalake import QuixTSDataLakeSink, StreamTimeoutTracker

__all__ = ("QuixTSDataLakeSink", "StreamTimeoutTracker")
