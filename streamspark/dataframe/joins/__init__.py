"""Joins of a dataframe with other data; lookups against external stores are in :mod:`.lookups`.

>>> from streamspark.dataframe.joins.lookups import SQLiteLookup, SQLiteLookupField
"""

__all__: tuple[str, ...] = ()
