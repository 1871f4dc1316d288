"""The examples in the sources' docstrings run (creating a source opens and connects nothing)."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "streamspark.sources",
    "streamspark.sources.base.exceptions",
    "streamspark.checkpointing.exceptions",
    "streamspark.sources.base.multiprocessing",
    "streamspark.sources.base.source",
    "streamspark.sources.base.store",
    "streamspark.sources.base.manager",
    "streamspark.sources.core.csv",
    "streamspark.sources.core.kafka.kafka",
    "streamspark.sources.core.kafka.checkpoint",
    "streamspark.sources.community.pandas",
    "streamspark.sources.community.file.local",
    "streamspark.sources.community.file.formats",
    "streamspark.sources.community.file.formats.json",
    "streamspark.sources.community.file.formats.parquet",
    "streamspark.sources.community.file.compressions",
    "streamspark.sources.community.file.compressions.base",
    "streamspark.sources.community.file.components.file_deserializer",
    "streamspark.sources.community.file.components.file_fetcher",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0
