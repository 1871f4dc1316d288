"""The examples in the sink catalogue's docstrings run (constructing a sink connects nowhere)."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "streamspark.sinks.base._delivery", "streamspark.sinks._influx.points", "streamspark.sinks.core.influxdb3",
    "streamspark.sinks.community.influxdb1", "streamspark.sinks.community.postgresql",
    "streamspark.sinks.community.redis", "streamspark.sinks.community.elasticsearch",
    "streamspark.sinks.community.mongodb", "streamspark.sinks.community.bigquery",
    "streamspark.sinks.community.kinesis", "streamspark.sinks.community.pubsub",
    "streamspark.sinks.community.neo4j", "streamspark.sinks.community.iceberg",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0


def test_missing_client_library_names_the_extra(monkeypatch):
    import sys

    from streamspark.sinks.community.redis import RedisSink

    monkeypatch.setitem(sys.modules, "redis", None)  # as if not installed
    with pytest.raises(ImportError, match=r'RedisSink needs the \'redis\' package: pip install "streamspark\[redis\]"'):
        RedisSink(host="localhost", port=6379, db=0).start()
