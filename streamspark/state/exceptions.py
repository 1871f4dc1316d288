"""State errors."""

from __future__ import annotations

from ..exceptions import StreamsparkException

__all__ = ("StateError", "StateSerializationError", "StoreAlreadyRegisteredError")


class StateError(StreamsparkException):
    """State cannot be read or written."""


class StateSerializationError(StateError):
    """A state value is not JSON-serialisable."""


class StoreAlreadyRegisteredError(StateError):
    """Two windows of one stream use the same store name (give one of them another ``name``)."""
