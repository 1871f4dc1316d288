"""The logical plan: stream nodes, their fusion into per-record functions, and their errors."""

from .exceptions import InvalidOperation, InvalidTopology
from .stream import (
    BatchedWindow,
    Emitter,
    JoinStep,
    PushFn,
    ReturningFn,
    StateProvider,
    Stream,
    StreamNode,
    compose,
    describe,
    sources_of,
    upstream_of,
)

__all__ = (
    "Stream",
    "StreamNode",
    "compose",
    "describe",
    "Emitter",
    "StateProvider",
    "PushFn",
    "ReturningFn",
    "BatchedWindow",
    "JoinStep",
    "InvalidTopology",
    "InvalidOperation",
    "sources_of",
    "upstream_of",
)
