"""Per-key state for stateful dataframe steps.

>>> from streamspark.state import State
"""

from .base.state import State
from .exceptions import StateError, StateSerializationError
from .store import KeyedStateStore
from .types import ExpiredWindowDetail, WindowDetail, WindowedState

__all__ = (
    "State",
    "StateError",
    "StateSerializationError",
    "KeyedStateStore",
    "WindowedState",
    "WindowDetail",
    "ExpiredWindowDetail",
)
