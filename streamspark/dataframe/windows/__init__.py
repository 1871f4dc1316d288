"""Windowed aggregations: tumbling, hopping, sliding (time and count) and session windows.

>>> from streamspark.dataframe.windows import Mean, Count, Max
>>> # sdf.tumbling_window(timedelta(minutes=1)).agg(avg=Mean("temp"), n=Count()).final()
"""

from .aggregations import (
    Aggregator, BaseAggregator, BaseCollector, Collect, Collector, Count, Earliest, First, Last, Latest, Max, Mean,
    Min, Reduce, Sum,
)
from .definitions import (
    HoppingCountWindowDefinition, HoppingTimeWindowDefinition, SessionWindowDefinition,
    SlidingCountWindowDefinition, SlidingTimeWindowDefinition, TumblingCountWindowDefinition,
    TumblingTimeWindowDefinition, Window, WindowDefinition,
)

__all__ = (
    "Aggregator", "BaseAggregator", "BaseCollector", "Collector",
    "Count", "Sum", "Mean", "Max", "Min", "Earliest", "Latest", "First", "Last", "Reduce", "Collect",
    "Window", "WindowDefinition", "TumblingTimeWindowDefinition", "HoppingTimeWindowDefinition",
    "SlidingTimeWindowDefinition", "TumblingCountWindowDefinition", "HoppingCountWindowDefinition",
    "SlidingCountWindowDefinition", "SessionWindowDefinition",
)
