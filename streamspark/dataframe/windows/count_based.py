"""Count windows (tumbling, hopping, sliding): ``sdf.tumbling_count_window(...)`` → an
aggregation → a :class:`CountWindow`.

>>> from streamspark.dataframe import StreamingDataFrame
>>> from streamspark.models import Topic
>>> window = StreamingDataFrame(Topic("t")).tumbling_count_window(2).sum()
>>> isinstance(window, CountWindow)
True
>>> sdf = window.final()
>>> [sdf.test(v, timestamp=t) for v, t in ((1, 1), (2, 5))]
[[], [({'start': 1, 'end': 5, 'value': 3}, b'key', 1, None)]]
"""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING, Literal, Optional, Union

from .base import Window

if TYPE_CHECKING:
    from ..dataframe import StreamingDataFrame

__all__ = ("CountWindow",)


class CountWindow(Window):
    """A count window with its aggregation(s): a window closes as soon as it holds its count of
    records; its start and end are the smallest and largest timestamps it saw."""

    def final(
        self, closing_strategy: Literal["key"] = "key", *, close_idle_after: Optional[Union[int, timedelta]] = None
    ) -> "StreamingDataFrame":
        """Emit each window once, when it is full (windows close by key).

        :param close_idle_after: also close a key's open windows, with what they hold, once it
            sent nothing for this long in *processing* time (ms or timedelta); see
            :meth:`TimeWindow.final <streamspark.dataframe.windows.time_based.TimeWindow.final>`.
        """
        return self._final(closing_strategy, close_idle_after)

    def current(self, closing_strategy: Literal["key"] = "key") -> "StreamingDataFrame":
        """Emit the updated window(s) on every record (not with collectors)."""
        self._check_current()
        return self._apply("current", closing_strategy)
