"""CSVSource: rows to JSON messages on the real broker; keys, timestamps, dialects; bad input."""

from __future__ import annotations

import json

import pytest

from streamspark.sources import CSVSource, SourceException, SourceInputError

from ..conftest import run_in_process

CSV = "id,temp,ts\ns1,20.5,1000\ns2,21.0,2000\ns1,22.5,3000\n"


@pytest.fixture
def readings(tmp_path):
    path = tmp_path / "readings.csv"
    path.write_text(CSV)
    return path


def test_rows_become_json_messages_with_extracted_keys_and_timestamps(sources, kafka, readings):
    source = CSVSource(
        readings, name="readings", key_extractor=lambda row: row["id"], timestamp_extractor=lambda row: int(row["ts"])
    )
    topic = kafka.new_topic()
    sources.wait(sources.start(source, source.default_topic().__clone__(name=topic)))
    msgs = kafka.consume(topic, expected=3)
    assert [(m.key(), json.loads(m.value()), m.timestamp()[1]) for m in msgs] == [
        (b"s1", {"id": "s1", "temp": "20.5", "ts": "1000"}, 1000),
        (b"s2", {"id": "s2", "temp": "21.0", "ts": "2000"}, 2000),
        (b"s1", {"id": "s1", "temp": "22.5", "ts": "3000"}, 3000),
    ]


def test_a_malformed_row_stops_the_source_naming_it_and_the_line(sources, kafka, tmp_path):
    path = tmp_path / "bad.csv"
    path.write_text("id,temp\ns1,20\ns2,21,oops\n")
    topic = kafka.new_topic()
    source = CSVSource(path, name="bad")
    with pytest.raises(SourceException) as info:
        sources.wait(sources.start(source, source.default_topic().__clone__(name=topic)))
    assert f'Source "bad" cannot read "{path}" line 3: 3 fields, the header has 2' in str(info.value)
    assert isinstance(info.value.__cause__, SourceInputError)


# --- in process (no broker) ---------------------------------------------------------------------------


def test_without_extractors_there_is_no_key_and_no_timestamp(readings):
    msgs = run_in_process(CSVSource(readings, name="readings"))
    assert [(m["key"], m["timestamp"]) for m in msgs] == [(None, None)] * 3
    assert json.loads(msgs[0]["value"]) == {"id": "s1", "temp": "20.5", "ts": "1000"}


def test_bytes_keys_are_produced_as_they_are(readings):
    msgs = run_in_process(CSVSource(readings, name="readings", key_extractor=lambda row: row["id"].encode() + b"\xff"))
    assert [m["key"] for m in msgs] == [b"s1\xff", b"s2\xff", b"s1\xff"]


def test_the_dialect_sets_the_delimiter(tmp_path):
    path = tmp_path / "tabs.tsv"
    path.write_text("a\tb\n1\t2\n")
    assert [json.loads(m["value"]) for m in run_in_process(CSVSource(path, name="t", dialect="excel-tab"))] == [
        {"a": "1", "b": "2"}
    ]
    with pytest.raises(ValueError, match="Unknown CSV dialect 'semicolons'"):
        CSVSource(path, name="t", dialect="semicolons")


def test_a_dialect_class_or_instance_is_taken_as_csv_takes_it(tmp_path):
    import csv

    path = tmp_path / "tabs.tsv"
    path.write_text("a\tb\n1\t2\n")
    for dialect in (csv.excel_tab, csv.excel_tab()):
        rows = [json.loads(m["value"]) for m in run_in_process(CSVSource(path, name="t", dialect=dialect))]
        assert rows == [{"a": "1", "b": "2"}]
    with pytest.raises(TypeError, match="csv dialect name or a csv.Dialect"):
        CSVSource(path, name="t", dialect=5)  # type: ignore[arg-type]


def test_a_short_row_gets_nulls_and_a_byte_order_mark_is_skipped(tmp_path):
    path = tmp_path / "short.csv"
    path.write_bytes("\ufeffa,b\n1\n".encode())
    assert [json.loads(m["value"]) for m in run_in_process(CSVSource(path, name="t"))] == [{"a": "1", "b": None}]


def test_a_stopped_source_produces_no_more_rows(readings):
    class StopAfterFirst(CSVSource):
        def produce(self, *args, **kwargs):
            super().produce(*args, **kwargs)
            self.stop()

    assert len(run_in_process(StopAfterFirst(readings, name="readings"))) == 1


@pytest.mark.parametrize(
    "content, item, reason",
    [
        (None, "the file", "No such file or directory"),
        (b"a,b\n1,2\n\xff\xfe,3\n", "line", "can't decode byte 0xff"),
        (b'a,b\n"1,2\n', None, None),  # an unterminated quote reads to the end: one row
    ],
)
def test_unreadable_input_names_the_source_and_the_item(tmp_path, content, item, reason):
    path = tmp_path / "in.csv"
    if content is not None:
        path.write_bytes(content)
    source = CSVSource(path, name="in")
    if item is None:
        assert len(run_in_process(source)) == 1
        return
    with pytest.raises(SourceInputError) as info:
        run_in_process(source)
    assert str(info.value).startswith('Source "in" cannot read ') and item in str(info.value)
    assert reason in str(info.value)


def test_a_failing_extractor_names_the_line(readings):
    source = CSVSource(readings, name="readings", timestamp_extractor=lambda row: int(row["temp"]))
    with pytest.raises(SourceInputError, match=r"line 2: an extractor failed: ValueError"):
        run_in_process(source)
