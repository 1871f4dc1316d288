"""The examples in the dataframe modules' docstrings run (in-process, ``sdf.test()``)."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "streamspark.dataframe.dataframe",
    "streamspark.dataframe.series",
    "streamspark.dataframe.exceptions",
    "streamspark.dataframe._table",
    "streamspark.dataframe.utils",
    "streamspark.dataframe.windows.definitions",
    "streamspark.dataframe.windows.base",
    "streamspark.dataframe.windows.time_based",
    "streamspark.dataframe.windows.sliding",
    "streamspark.dataframe.windows.count_based",
    "streamspark.dataframe.joins",
    "streamspark.dataframe.joins.lookups",
    "streamspark.dataframe.joins.lookups.base",
    "streamspark.dataframe.joins.lookups.sqlite",
    "streamspark.dataframe.joins.lookups.cache",
    "streamspark.dataframe.joins.lookups.utils",
    "streamspark.dataframe.joins.lookups.exceptions",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0
