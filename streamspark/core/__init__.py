"""The logical plan: stream nodes and their fusion into per-record Python functions."""

from .stream import Stream, StreamNode, compose

__all__ = ("Stream", "StreamNode", "compose")
