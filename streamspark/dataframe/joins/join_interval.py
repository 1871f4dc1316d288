"""``sdf.join_interval(right)``: records of both sides whose timestamps lie within an interval.

>>> from streamspark.dataframe import StreamingDataFrame
>>> from streamspark.models import Topic
>>> clicks, views = StreamingDataFrame(Topic("clicks")), StreamingDataFrame(Topic("views"))
>>> pairs = clicks.join_interval(views, how="outer", backward_ms=50, forward_ms=10)
>>> pairs.test({"view": 1}, key=b"u", timestamp=100, topic=views.topic)
[({'view': 1}, b'u', 100, [])]
>>> pairs.test({"click": 1}, key=b"u", timestamp=120, topic=clicks.topic)
[({'click': 1, 'view': 1}, b'u', 120, [])]
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any, Callable, Literal, Optional, Union, get_args

from ...core.stream import PushFn
from ..utils import ensure_milliseconds
from .base import Join, OnOverlap

__all__ = ("IntervalJoin", "IntervalJoinHow", "IntervalJoinHow_choices")

IntervalJoinHow = Literal["inner", "left", "right", "outer"]
IntervalJoinHow_choices = get_args(IntervalJoinHow)


class IntervalJoin(Join):
    """A join that matches records based on time intervals.

    Both sides' records are stored by key and timestamp, and both emit. A left record at
    ``t`` merges with every stored right record in ``[t - backward_ms, t]``; a right record
    at ``t`` merges with every stored left record in ``[t - forward_ms, t]``: each pair is
    emitted once, by the later of its two records. ``"left"``/``"outer"`` also emit a left
    record without a match (merged with ``None``), ``"right"``/``"outer"`` a right one.
    Outputs carry the key and timestamp of the record that produced them and no headers.

    :raises ValueError: ``backward_ms`` is greater than ``grace_ms`` (records would expire
        before they can match).
    """

    choices = IntervalJoinHow_choices

    def __init__(
        self,
        how: IntervalJoinHow,
        on_merge: Union[OnOverlap, Callable[[Any, Any], Any]],
        grace_ms: Union[int, timedelta],
        store_name: Optional[str] = None,
        backward_ms: Union[int, timedelta] = 0,
        forward_ms: Union[int, timedelta] = 0,
    ) -> None:
        super().__init__(how, on_merge, grace_ms, store_name)
        self.backward_ms = ensure_milliseconds(backward_ms)
        self.forward_ms = ensure_milliseconds(forward_ms)
        if self.backward_ms < 0 or self.forward_ms < 0:
            raise ValueError("backward_ms and forward_ms must not be negative")
        if self.backward_ms > self.grace_ms:
            raise ValueError("The backward_ms must not be greater than the grace_ms to avoid losing data.")

    def stores(self) -> list[tuple[str, str]]:
        return [(self.left_id, self.store_name), (self.right_id, self.store_name)]

    def compile(self, states: Any, downstream: PushFn) -> tuple[PushFn, PushFn]:
        lefts = self.store(states, self.left_id, keep_duplicates=True)
        rights = self.store(states, self.right_id, keep_duplicates=True)
        merge = self._merger
        unmatched_left = self.how in ("left", "outer")
        unmatched_right = self.how in ("right", "outer")
        backward, forward = self.backward_ms, self.forward_ms

        def left(v: Any, k: Any, t: int, h: Any) -> None:
            lefts.set_for_timestamp(t, v, k)
            matches = rights.get_interval(t - backward, t + 1, k)
            if matches:
                for match in matches:
                    downstream(merge(v, match), k, t, [])
            elif unmatched_left:
                downstream(merge(v, None), k, t, [])

        def right(v: Any, k: Any, t: int, h: Any) -> None:
            rights.set_for_timestamp(t, v, k)
            matches = lefts.get_interval(t - forward, t + 1, k)
            if matches:
                for match in matches:
                    downstream(merge(match, v), k, t, [])
            elif unmatched_right:
                downstream(merge(None, v), k, t, [])

        return left, right
