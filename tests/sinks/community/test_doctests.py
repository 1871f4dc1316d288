"""The examples in the sink catalogue's docstrings run (constructing a sink connects nowhere)."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "streamspark.sinks.base._delivery",
    "streamspark.sinks.base.exceptions",
    "streamspark.sinks.base.sink",
    "streamspark.utils.client_connect",
    "streamspark.sinks._influx.points",
    "streamspark.sinks.core.influxdb3",
    "streamspark.sinks.community.influxdb1",
    "streamspark.sinks.community.postgresql",
    "streamspark.sinks.community.redis",
    "streamspark.sinks.community.elasticsearch",
    "streamspark.sinks.community.mongodb",
    "streamspark.sinks.community.bigquery",
    "streamspark.sinks.community.kinesis",
    "streamspark.sinks.community.pubsub",
    "streamspark.sinks.community.neo4j",
    "streamspark.sinks.community.iceberg",
    "streamspark.sinks.community.file.local",
    "streamspark.sinks.community.file.s3",
    "streamspark.sinks.community.file.azure",
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


def test_every_sink_pickles_without_its_client():
    """Spark ships the configured sink to its workers: configuration pickles, connections do not."""
    import pickle

    from streamspark.sinks.community.bigquery import BigQuerySink
    from streamspark.sinks.community.elasticsearch import ElasticsearchSink
    from streamspark.sinks.community.iceberg import AWSIcebergConfig, IcebergSink
    from streamspark.sinks.community.influxdb1 import InfluxDB1Sink
    from streamspark.sinks.community.kinesis import KinesisSink
    from streamspark.sinks.community.mongodb import MongoDBSink
    from streamspark.sinks.community.neo4j import Neo4jSink
    from streamspark.sinks.community.postgresql import PostgreSQLSink
    from streamspark.sinks.community.pubsub import PubSubSink
    from streamspark.sinks.community.redis import RedisSink
    from streamspark.sinks.core.influxdb3 import InfluxDB3Sink

    sinks = [
        PostgreSQLSink(host="h", port=1, dbname="d", user="u", password="p", table_name="t"),
        RedisSink(host="h", port=1, db=0),
        MongoDBSink(host="h", db="d", collection="c"),
        ElasticsearchSink(url="http://h:9200", index="i"),
        InfluxDB1Sink(host="h", database="d", measurement="m"),
        InfluxDB3Sink(token="t", host="h", organization_id="o", database="d", measurement="m"),
        BigQuerySink(project_id="p", location="US", dataset_id="d", table_name="t"),
        KinesisSink(stream_name="s"),
        PubSubSink(project_id="p", topic_id="t"),
        Neo4jSink(host="h", port=1, username="u", password="p", cypher_query="RETURN 1"),
        IcebergSink(table_name="n.t", config=AWSIcebergConfig(aws_s3_uri="s3://b/w")),
    ]
    for sink in sinks:
        if hasattr(sink, "_client"):
            sink._client = object()  # a live connection cannot be pickled
        if not isinstance(sink, PubSubSink):  # PubSubSink.add publishes at once
            sink.add({"a": 1}, b"k", 0, None, "t", 0, 0)
        copy = pickle.loads(pickle.dumps(sink))
        assert type(copy) is type(sink)
        assert getattr(copy, "_client", None) is None, type(sink).__name__
        assert not getattr(copy, "_batches", {}) and not getattr(copy, "_buffer", []), type(sink).__name__
