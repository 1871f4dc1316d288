"""``sdf.join_asof(right)``: each left record with the latest right record of its key at or before it.

>>> from streamspark.dataframe import StreamingDataFrame
>>> from streamspark.models import Topic
>>> readings, configs = StreamingDataFrame(Topic("readings")), StreamingDataFrame(Topic("configs"))
>>> enriched = readings.join_asof(configs, how="left")
>>> enriched.test({"model": "m1"}, key=b"d1", timestamp=10, topic=configs.topic)
[]
>>> enriched.test({"temp": 21}, key=b"d1", timestamp=15, topic=readings.topic)
[({'temp': 21, 'model': 'm1'}, b'd1', 15, None)]
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any, Callable, Literal, Optional, Union, get_args

from ...core.stream import PushFn
from .base import Join, OnOverlap

__all__ = ("AsOfJoin", "AsOfJoinHow", "AsOfJoinHow_choices")

AsOfJoinHow = Literal["inner", "left"]
AsOfJoinHow_choices = get_args(AsOfJoinHow)


class AsOfJoin(Join):
    """The as-of join (see :meth:`StreamingDataFrame.join_asof <streamspark.dataframe.StreamingDataFrame.join_asof>`).

    Right records are stored by key and timestamp and emit nothing; a left record takes the
    right record of its key with the largest timestamp at or before its own and emits the
    merged value (with ``how="inner"`` only when there is one), keeping its own key,
    timestamp and headers.
    """

    choices = AsOfJoinHow_choices

    def __init__(
        self,
        how: AsOfJoinHow,
        on_merge: Union[OnOverlap, Callable[[Any, Any], Any]],
        grace_ms: Union[int, timedelta],
        store_name: Optional[str] = None,
    ) -> None:
        super().__init__(how, on_merge, grace_ms, store_name)

    def compile(self, states: Any, downstream: PushFn) -> tuple[PushFn, PushFn]:
        rights = self.store(states, self.right_id, keep_duplicates=False)
        merge = self._merger
        inner = self.how == "inner"
        latest = rights.get_latest
        store = rights.set_for_timestamp

        def left(v: Any, k: Any, t: int, h: Any) -> None:
            match = latest(t, k)
            if not match:  # as the reference: an empty or zero right value is no match either
                if inner:
                    return
                match = None
            downstream(merge(v, match), k, t, h)

        def right(v: Any, k: Any, t: int, h: Any) -> None:
            store(t, v, k)

        return left, right
