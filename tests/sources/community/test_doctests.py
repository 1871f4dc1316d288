"""The examples in the object-store, Kinesis, Pub/Sub and InfluxDB 3 sources' docstrings run
(creating a source opens and connects nothing)."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "streamspark.sources.community._client",
    "streamspark.sources.community.aws_errors",
    "streamspark.sources.community.file",
    "streamspark.sources.community.file.s3",
    "streamspark.sources.community.file.azure",
    "streamspark.sources.community.file.object_names",
    "streamspark.sources.community.kinesis",
    "streamspark.sources.community.kinesis.consumer",
    "streamspark.sources.community.kinesis.kinesis",
    "streamspark.sources.community.pubsub",
    "streamspark.sources.community.pubsub.pubsub",
    "streamspark.sources.community.influxdb3",
    "streamspark.sources.community.influxdb3.influxdb3",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0
