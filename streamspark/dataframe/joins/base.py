"""What the time-based joins share: the merge rule, the grace period and the store name.

A join is a step of two dataframes. On Spark, the records of one message key from both
(co-partitioned) topics meet in the same state bucket, so the join runs where the key's state is: the right
side's records (and, for :class:`~streamspark.dataframe.joins.join_interval.IntervalJoin`, the
left side's) are kept by timestamp in that state
(:class:`~streamspark.state.timestamped.TimestampedStore`) and saved with it, exactly once.

>>> from streamspark.dataframe.joins.join_asof import AsOfJoin
>>> AsOfJoin(how="left", on_merge="keep-left", grace_ms=1000).grace_ms
1000
"""

from __future__ import annotations

import logging
from abc import ABC, abstractmethod
from datetime import timedelta
from typing import TYPE_CHECKING, Any, Callable, Literal, Optional, Union, get_args

from ...core.stream import PushFn
from ...state.timestamped import TimestampedStore
from ..utils import ensure_milliseconds
from .utils import keep_left_merger, keep_right_merger, raise_merger

if TYPE_CHECKING:
    from ..dataframe import StreamingDataFrame

__all__ = ("Join", "OnOverlap", "OnOverlap_choices")

OnOverlap = Literal["keep-left", "keep-right", "raise"]
OnOverlap_choices = get_args(OnOverlap)

_MERGERS: dict[str, Callable[[Any, Any], Any]] = {
    "keep-left": keep_left_merger,
    "keep-right": keep_right_merger,
    "raise": raise_merger,
}


class Join(ABC):
    """A time-based join of two dataframes of different topics.

    :param how: which records emit without a match (the subclass lists its choices).
    :param on_merge: ``"raise"``, ``"keep-left"``, ``"keep-right"`` or a function
        ``(left, right) -> merged`` (it must return a new object, not change its inputs).
    :param grace_ms: how long, in event time, a key keeps stored records behind its newest one.
    :param store_name: the name of the join's store (default ``"join"``); two joins storing
        the records of the same dataframe need different names.
    """

    #: the ``how`` values the join accepts
    choices: tuple[str, ...] = ()

    def __init__(
        self,
        how: str,
        on_merge: Union[OnOverlap, Callable[[Any, Any], Any]],
        grace_ms: Union[int, timedelta],
        store_name: Optional[str] = None,
    ) -> None:
        if how not in self.choices:
            raise ValueError(f'Invalid "how" value: {how!r}. Valid choices are: {", ".join(self.choices)}.')
        if callable(on_merge):
            self._merger = on_merge
        elif isinstance(on_merge, str) and on_merge in _MERGERS:
            self._merger = _MERGERS[on_merge]
        else:
            raise ValueError(
                f'Invalid "on_merge" value: {on_merge!r}. Provide one of {", ".join(OnOverlap_choices)} '
                "or a function (left, right) -> merged"
            )
        self._how = how
        self.grace_ms = ensure_milliseconds(grace_ms)
        if self.grace_ms < 0:
            raise ValueError(f"grace_ms must not be negative, got {self.grace_ms}")
        self.store_name = store_name or "join"
        #: the stream ids of the left and right dataframes (set by :meth:`join`)
        self.left_id = ""
        self.right_id = ""

    @property
    def how(self) -> str:
        return self._how

    def join(self, left: "StreamingDataFrame", right: "StreamingDataFrame") -> "StreamingDataFrame":
        """A new dataframe with the outputs of the join of ``left`` and ``right``.

        :raises ValueError: both dataframes come from the same topic (a self-join).
        """
        from ..dataframe import StreamingDataFrame, joined

        if not isinstance(right, StreamingDataFrame):
            raise TypeError(f"A join needs a StreamingDataFrame on the right, got {type(right).__name__}")
        if left.stream_id == right.stream_id:
            raise ValueError("Joining dataframes originating from the same topic is not yet supported.")
        self.left_id, self.right_id = left.stream_id, right.stream_id
        _warn_on_key_types(left, right)
        return joined(left, right, self)

    def stores(self) -> list[tuple[str, str]]:
        """The (stream id, store name) pairs of the stores this join writes."""
        return [(self.right_id, self.store_name)]

    def store(self, states: Any, stream_id: str, keep_duplicates: bool) -> TimestampedStore:
        """The join's store of ``stream_id``'s records in the bucket state ``states``."""
        return TimestampedStore(states, f"{stream_id}/join:{self.store_name}", self.grace_ms, keep_duplicates)

    @abstractmethod
    def compile(self, states: Any, downstream: PushFn) -> tuple[PushFn, PushFn]:
        """``(left_push, right_push)``: what a left and a right record run, sending outputs on
        to ``downstream``; ``states`` is the state of the key's bucket."""

    def describe(self) -> str:
        return f'{type(self).__name__}(how="{self._how}") of "{self.left_id}" with "{self.right_id}"'


def _warn_on_key_types(left: "StreamingDataFrame", right: "StreamingDataFrame") -> None:
    """Warn when the two topics' keys are read differently: such keys never meet in state."""
    lkey, rkey = left.topic.key_deserializer if left.topic else None, right.topic.key_deserializer if right.topic else None
    if type(lkey) is not type(rkey):
        logging.getLogger(__name__).warning(
            'Joining "%s" (keys read by %s) with "%s" (keys read by %s): records join only when their '
            "deserialized keys are equal, so keys of different types never match",
            left.topic.name if left.topic else left.stream_id,
            type(lkey).__name__,
            right.topic.name if right.topic else right.stream_id,
            type(rkey).__name__,
        )
