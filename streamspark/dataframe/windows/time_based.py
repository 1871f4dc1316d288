"""Time windows (tumbling, hopping and session windows): ``sdf.tumbling_window(...)`` → an aggregation → a
:class:`TimeWindow` → ``.final()`` / ``.current()``.

>>> from streamspark.dataframe import StreamingDataFrame
>>> from streamspark.models import Topic
>>> window = StreamingDataFrame(Topic("t")).tumbling_window(duration_ms=10).sum()
>>> isinstance(window, TimeWindow)
True
>>> sdf = window.final()
>>> [sdf.test(v, timestamp=t) for v, t in ((1, 1), (2, 5), (3, 12))]
[[], [], [({'start': 0, 'end': 10, 'value': 3}, b'key', 0, None)]]
"""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING, Literal, Optional, Union

from .base import Window

if TYPE_CHECKING:
    from ..dataframe import StreamingDataFrame

__all__ = ("TimeWindow", "SessionWindow", "ClosingStrategyValues")

#: ``"key"``: a key's records close its windows; ``"partition"``: any record closes the windows
#: of every key of its partition
ClosingStrategyValues = Literal["key", "partition"]


class TimeWindow(Window):
    """A time window with its aggregation(s) (tumbling, hopping; sliding and session windows
    are time windows too)."""

    def final(
        self, closing_strategy: ClosingStrategyValues = "key", *, close_idle_after: Optional[Union[int, timedelta]] = None
    ) -> "StreamingDataFrame":
        """Emit each window once, when it closes: ``{"start": ms, "end": ms, "value": ...}``.

        A window closes when event time passes its end + grace.

        :param closing_strategy: ``"key"`` (default): a key's records close its windows;
            ``"partition"``: records close the windows of every key of their partition.
        :param close_idle_after: also close a key's open windows once it sent nothing for this
            long in *processing* time (ms or timedelta) — for keys that went quiet, whose last
            window would otherwise never close. Later records for those windows are late. On
            Spark this uses processing-time timers (an empty micro-batch runs every trigger
            interval to check them). Not in ``sdf.test()``; ``closing_strategy="key"`` only.
        """
        return self._final(closing_strategy, close_idle_after)

    def current(self, closing_strategy: ClosingStrategyValues = "key") -> "StreamingDataFrame":
        """Emit the updated window(s) on every record (not with collectors).

        :param closing_strategy: as in :meth:`final`.
        """
        self._check_current()
        return self._apply("current", closing_strategy)


class SessionWindow(TimeWindow):
    """A session window (``sdf.session_window(...)``): a key's records at most the inactivity
    gap apart form one session ``[first, last + 1)``, which closes once event time reaches its
    end + 2 * gap + grace."""
