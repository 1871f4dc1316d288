"""State errors."""

from __future__ import annotations

from ..exceptions import StreamsparkException

__all__ = ("StateError", "StateSerializationError")


class StateError(StreamsparkException):
    """State cannot be read or written."""


class StateSerializationError(StateError):
    """A state value is not JSON-serialisable."""
