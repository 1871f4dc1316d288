"""Windowed aggregations: tumbling, hopping, sliding (time and count) and session windows.

>>> from streamspark.dataframe.windows import Mean, Count, Max
>>> # sdf.tumbling_window(timedelta(minutes=1)).agg(avg=Mean("temp"), n=Count()).final()
"""

from .aggregations import (
    Aggregator,
    BaseAggregator,
    BaseCollector,
    Collect,
    Collector,
    Count,
    Earliest,
    First,
    Last,
    Latest,
    Max,
    Mean,
    Min,
    Reduce,
    Sum,
)
from .base import get_window_ranges
from .count_based import CountWindow
from .definitions import (
    HoppingCountWindowDefinition,
    HoppingTimeWindowDefinition,
    SessionWindowDefinition,
    SlidingCountWindowDefinition,
    SlidingTimeWindowDefinition,
    TumblingCountWindowDefinition,
    TumblingTimeWindowDefinition,
    Window,
    WindowDefinition,
)
from .sliding import SlidingWindow
from .time_based import SessionWindow, TimeWindow

__all__ = (
    "Aggregator",
    "BaseAggregator",
    "BaseCollector",
    "Collector",
    "Count",
    "Sum",
    "Mean",
    "Max",
    "Min",
    "Earliest",
    "Latest",
    "First",
    "Last",
    "Reduce",
    "Collect",
    "Window",
    "TimeWindow",
    "SlidingWindow",
    "SessionWindow",
    "CountWindow",
    "get_window_ranges",
    "WindowDefinition",
    "TumblingTimeWindowDefinition",
    "HoppingTimeWindowDefinition",
    "SlidingTimeWindowDefinition",
    "TumblingCountWindowDefinition",
    "HoppingCountWindowDefinition",
    "SlidingCountWindowDefinition",
    "SessionWindowDefinition",
)
