"""The examples in the lake modules' docstrings run."""

from __future__ import annotations

import doctest

import pytest

from streamspark.sinks.datalake import _layout, catalog, compaction, sink, storage, timeout


@pytest.mark.parametrize("module", [_layout, catalog, compaction, sink, storage, timeout], ids=lambda m: m.__name__)
def test_docstring_examples(module, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0
