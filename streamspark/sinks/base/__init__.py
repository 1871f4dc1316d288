"""Sink base classes."""

from .batch import SinkBatch
from .exceptions import SinkBackpressureError
from .item import SinkItem
from .sink import BaseSink, BatchingSink, ClientConnectFailureCallback, ClientConnectSuccessCallback

__all__ = (
    "BaseSink",
    "BatchingSink",
    "SinkBatch",
    "SinkItem",
    "SinkBackpressureError",
    "ClientConnectSuccessCallback",
    "ClientConnectFailureCallback",
)
