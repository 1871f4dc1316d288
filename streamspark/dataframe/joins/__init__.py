"""Joins of a dataframe with other data.

Time-based joins of two dataframes (:class:`AsOfJoin` behind ``sdf.join_asof``,
:class:`IntervalJoin` behind ``sdf.join_interval``), the built-in merge rules, and lookups
against external stores (:mod:`.lookups`, behind ``sdf.join_lookup``).

>>> from streamspark.dataframe.joins import AsOfJoin, IntervalJoin, keep_left_merger
>>> from streamspark.dataframe.joins.lookups import SQLiteLookup, SQLiteLookupField
"""

from .base import Join, OnOverlap, OnOverlap_choices
from .join_asof import AsOfJoin, AsOfJoinHow
from .join_interval import IntervalJoin, IntervalJoinHow
from .utils import keep_left_merger, keep_right_merger, raise_merger

__all__ = (
    "Join",
    "OnOverlap",
    "OnOverlap_choices",
    "AsOfJoin",
    "AsOfJoinHow",
    "IntervalJoin",
    "IntervalJoinHow",
    "keep_left_merger",
    "keep_right_merger",
    "raise_merger",
)
