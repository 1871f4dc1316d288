"""Sinks that write a record's fields as columns refuse a non-dict value as it arrives (in
``add``), with Quix Streams' message: the record fails as a processing error of its own
(``on_processing_error`` may skip it) instead of failing the whole batch's write later."""

from __future__ import annotations

import pytest

from streamspark.sinks.community.bigquery import BigQuerySink
from streamspark.sinks.community.influxdb1 import InfluxDB1Sink
from streamspark.sinks.community.postgresql import PostgreSQLSink
from streamspark.sinks.core.influxdb3 import InfluxDB3Sink

SINKS = {
    "InfluxDB3Sink": lambda: InfluxDB3Sink(
        token="t", host="http://127.0.0.1:1", organization_id="o", database="d", measurement="m"
    ),
    "InfluxDB1Sink": lambda: InfluxDB1Sink(host="127.0.0.1", database="d", measurement="m"),
    "PostgreSQLSink": lambda: PostgreSQLSink(host="127.0.0.1", port=1, dbname="d", user="u", password="p", table_name="t"),
    "BigQuerySink": lambda: BigQuerySink(project_id="p", location="l", dataset_id="d", table_name="t"),
}


@pytest.mark.parametrize("name", sorted(SINKS))
@pytest.mark.parametrize("value", [5, "text", [1, 2], None])
def test_a_non_dict_value_is_refused_on_arrival(name, value):
    sink = SINKS[name]()
    with pytest.raises(TypeError, match=rf'^Sink "{name}" supports only dictionaries, got {type(value)!s}$'.replace("'", ".")):
        sink.add(value, b"k", 0, [], "topic", 0, 7)


# PostgreSQLSink writes all partitions in one transaction (no per-batch ``write``)
@pytest.mark.parametrize("name", sorted(set(SINKS) - {"PostgreSQLSink"}))
def test_dict_values_are_taken_and_a_refused_record_leaves_nothing_behind(name):
    written = []
    sink = SINKS[name]()
    sink.write = written.append  # what the sink would write, without its server
    with pytest.raises(TypeError):
        sink.add(1, b"k", 0, [], "topic", 0, 6)
    sink.add({"v": 1}, b"k", 0, [], "topic", 0, 7)
    sink.flush()
    assert [[item.value for item in batch] for batch in written] == [[{"v": 1}]]
