"""Lookup joins: enrich each record with data from outside the stream (``sdf.join_lookup``).

>>> from streamspark.dataframe.joins.lookups import SQLiteLookup, SQLiteLookupField
>>> SQLiteLookupField(table="devices", columns=["model"], on="id").build_query("d1", {})[0]
'SELECT model FROM devices WHERE id = ? LIMIT 1'

The Quix Configuration Service lookup of the reference is not provided: it reads the Quix
Cloud platform's configuration service, which streamspark does not support.
"""

from .base import BaseField, BaseLookup
from .exceptions import SQLiteLookupError
from .sqlite import SQLiteLookup, SQLiteLookupField, SQLiteLookupQueryField
from .utils import CacheInfo

__all__ = (
    "BaseField",
    "BaseLookup",
    "SQLiteLookup",
    "SQLiteLookupField",
    "SQLiteLookupQueryField",
    "SQLiteLookupError",
    "CacheInfo",
)
