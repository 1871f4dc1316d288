"""Per-key state for stateful dataframe steps.

>>> from streamspark.state import State
"""

from .exceptions import StateError, StateSerializationError
from .state import State
from .store import KeyedStateStore

__all__ = ("State", "StateError", "StateSerializationError", "KeyedStateStore")
