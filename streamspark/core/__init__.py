"""The logical plan: stream nodes and their fusion into per-record Python functions."""

from .stream import InvalidOperation, InvalidTopology, Stream, StreamNode, compose

__all__ = ("Stream", "StreamNode", "compose", "InvalidTopology", "InvalidOperation")
