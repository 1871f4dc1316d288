"""The logical plan: stream nodes, their fusion into per-record functions, and their errors."""

from .exceptions import InvalidOperation, InvalidTopology
from .stream import (
    BatchedWindow, Emitter, PushFn, ReturningFn, StateProvider, Stream, StreamNode, compose, describe,
)

__all__ = (
    "Stream", "StreamNode", "compose", "describe", "Emitter", "StateProvider", "PushFn", "ReturningFn",
    "BatchedWindow", "InvalidTopology", "InvalidOperation",
)
