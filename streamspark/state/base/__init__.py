"""The ``State`` interface of stateful steps.

>>> from streamspark.state.base import State
"""

from .state import State

__all__ = ("State",)
