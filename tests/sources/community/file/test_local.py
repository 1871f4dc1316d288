"""LocalFileSource: FileSink's files (JSON Lines, gzip, Parquet) back to a topic; pacing; bad files."""

from __future__ import annotations

import gzip
import io
import json
import time

import orjson
import pytest

from streamspark.sinks.community.file import FileSink
from streamspark.sinks.community.file import JSONFormat as SinkJSONFormat
from streamspark.sources import SourceException, SourceInputError
from streamspark.sources.community.file import FileSource, JSONFormat, LocalFileSource

from ...conftest import RecordingProducer, run_in_process


def jsonl(*records, compress=False) -> bytes:
    data = b"".join(orjson.dumps(r) + b"\n" for r in records)
    return gzip.compress(data) if compress else data


def record(key, value, ts):
    return {"_key": key, "_value": value, "_timestamp": ts}


def write_partitions(root, compress=False):
    """A FileSink-like export of a 2-partition topic: <root>/<partition>/<offset>.jsonl[.gz]."""
    ext = ".jsonl.gz" if compress else ".jsonl"
    for partition, records in {
        0: [record("a", {"n": 0}, 1000), record("a", {"n": 1}, 1001)],
        1: [record("b", {"n": 2}, 1002)],
    }.items():
        (root / str(partition)).mkdir(parents=True)
        (root / str(partition) / f"{0:019d}{ext}").write_bytes(jsonl(records[0], compress=compress))
        if len(records) > 1:
            (root / str(partition) / f"{1:019d}{ext}").write_bytes(jsonl(*records[1:], compress=compress))


def test_gzip_json_partition_folders_to_a_topic_with_as_many_partitions(sources, kafka, tmp_path):
    root = tmp_path / "readings"
    write_partitions(root, compress=True)
    source = LocalFileSource(root, compression="gzip", has_partition_folders=True, replay_speed=0)
    assert source.name == "file_readings"
    default = source.default_topic()
    assert default.create_config.num_partitions == 2
    topic = kafka.new_topic(partitions=2)
    sources.wait(sources.start(source, default.__clone__(name=topic)))
    msgs = kafka.consume(topic, expected=3)
    assert sorted((m.key(), json.loads(m.value())["n"], m.timestamp()[1]) for m in msgs) == [
        (b"a", 0, 1000),
        (b"a", 1, 1001),
        (b"b", 2, 1002),
    ]


def test_a_broken_parquet_file_stops_the_source_naming_the_file(sources, kafka, tmp_path):
    bad = tmp_path / "export" / "part.parquet"
    bad.parent.mkdir()
    bad.write_bytes(b"PAR1 but not really")
    source = LocalFileSource(bad.parent, file_format="parquet", name="lake")
    with pytest.raises(SourceException) as info:
        sources.wait(sources.start(source, source.default_topic().__clone__(name=kafka.new_topic())))
    assert f'Source "lake" cannot read the file "{bad}": not a valid Parquet file' in str(info.value)


# --- in process (no broker) ---------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["json", "parquet"])
def test_what_file_sink_wrote_is_produced_again(tmp_path, monkeypatch, fmt):
    monkeypatch.chdir(tmp_path)
    sink = FileSink(directory="out", format=fmt)
    sink.setup()
    for offset, (key, value) in enumerate([(b"k1", {"a": 1, "b": "x"}), (b"k2", {"a": 2, "b": "y"})]):
        sink.add(value, key, 1000 + offset, None, "readings", 0, offset)
    sink.flush()
    msgs = run_in_process(LocalFileSource(tmp_path / "out" / "readings", file_format=fmt, replay_speed=0))
    assert [(m["key"], json.loads(m["value"]), m["timestamp"]) for m in msgs] == [
        ("k1", {"a": 1, "b": "x"}, 1000),
        ("k2", {"a": 2, "b": "y"}, 1001),
    ]


def test_nan_and_infinity_written_by_file_sink_are_read_back(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    sink = FileSink(directory="out", format="json")
    sink.add({"x": float("nan"), "y": float("inf")}, b"k", 1000, None, "readings", 0, 0)
    sink.flush()
    msgs = run_in_process(LocalFileSource(tmp_path / "out" / "readings", replay_speed=0))
    # read (they were refused as invalid JSON); the topic's JSON serializer then writes null
    assert [(m["key"], m["value"]) for m in msgs] == [("k", b'{"x":null,"y":null}')]


def test_a_negative_replay_speed_means_no_delay(tmp_path, monkeypatch):
    (tmp_path / "f.jsonl").write_bytes(jsonl(record("k", 0, 0), record("k", 1, 60_000)))
    slept: list[float] = []
    monkeypatch.setattr(time, "sleep", slept.append)
    assert [json.loads(m["value"]) for m in run_in_process(LocalFileSource(tmp_path, replay_speed=-1))] == [0, 1]
    assert slept == []


def test_file_sink_gzip_files_with_appended_batches_are_read_whole(tmp_path):
    fmt = SinkJSONFormat(compress=True)
    path = tmp_path / "t" / "0" / f"{0:019d}{fmt.file_extension}"
    path.parent.mkdir(parents=True)
    path.write_bytes(gzip.compress(jsonl(record("k", 1, 1))) + gzip.compress(jsonl(record("k", 2, 2))))
    msgs = run_in_process(LocalFileSource(tmp_path / "t", compression="gz", replay_speed=0))
    assert [json.loads(m["value"]) for m in msgs] == [1, 2]


def test_folders_are_walked_recursively_in_name_order_with_a_flush_after_each_file(tmp_path):
    for rel, n in [("b/2.jsonl", 2), ("a/1.jsonl", 1), ("a/0.jsonl", 0), ("c.jsonl", 3)]:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_bytes(jsonl(record(None, n, n)))
    source = LocalFileSource(tmp_path, replay_speed=0)
    producer = RecordingProducer()
    source.configure(source.default_topic(), producer)
    source.start()
    assert [json.loads(m["value"]) for m in producer.messages] == [0, 1, 2, 3]
    assert producer.flushes == 4 + 1  # each file, then the final flush


def test_setters_pick_the_message_parts_of_any_record(tmp_path):
    (tmp_path / "events.jsonl").write_bytes(jsonl({"user": "u1", "at": 5, "kind": "click"}))
    source = LocalFileSource(
        tmp_path / "events.jsonl",
        key_setter=lambda r: r["user"],
        value_setter=lambda r: {"kind": r["kind"]},
        timestamp_setter=lambda r: r["at"],
        file_format=JSONFormat(compression=None, loads=json.loads),
        replay_speed=0,
    )
    assert source.name == "file_events.jsonl"
    assert [(m["key"], m["value"], m["timestamp"]) for m in run_in_process(source)] == [("u1", b'{"kind":"click"}', 5)]


def test_replay_speed_scales_the_gaps_between_record_timestamps(tmp_path, monkeypatch):
    (tmp_path / "f.jsonl").write_bytes(jsonl(*(record("k", n, ts) for n, ts in enumerate([0, 1000, 1005, 3000]))))
    clock = [0.0]
    slept: list[float] = []

    def fake_sleep(seconds: float) -> None:
        slept.append(seconds)
        clock[0] += seconds

    monkeypatch.setattr(time, "sleep", fake_sleep)
    monkeypatch.setattr(time, "monotonic", lambda: clock[0])
    run_in_process(LocalFileSource(tmp_path, replay_speed=0.5))
    # 1000 ms * 0.5, then 5 ms * 0.5 (too short to sleep), then 1995 ms * 0.5
    assert sum(slept) == pytest.approx(0.5 + 0.9975)
    slept.clear()
    run_in_process(LocalFileSource(tmp_path, replay_speed=0))
    assert slept == []


@pytest.mark.parametrize(
    "content, kwargs, reason",
    [
        (jsonl(record("k", 1, 1)) + b"{not json\n", {}, 'the file "{path}": line 2 is not valid JSON'),
        (b"[1, 2]\n", {}, 'the file "{path}": line 1 is not a JSON object'),
        (jsonl(record("k", 1, 1)), {"compression": "gzip"}, 'the file "{path}": not valid gzip data'),
        (b"not parquet", {"file_format": "parquet"}, 'the file "{path}": not a valid Parquet file'),
        (jsonl({"_key": "k", "_value": 1}), {}, "record 1 of \"{path}\": a setter failed: KeyError('_timestamp')"),
    ],
)
def test_bad_files_name_the_source_and_the_item(tmp_path, content, kwargs, reason):
    path = tmp_path / "data.bin"
    path.write_bytes(content)
    with pytest.raises(SourceInputError) as info:
        run_in_process(LocalFileSource(path, name="files", replay_speed=0, **kwargs))
    assert str(info.value).startswith('Source "files" cannot read ' + reason.format(path=path))


def test_a_missing_file_names_it(tmp_path):
    with pytest.raises(SourceInputError, match='Source "files" cannot read the file ".*nope.jsonl": No such file'):
        run_in_process(LocalFileSource(tmp_path / "nope.jsonl", name="files"))


def test_parameters_are_checked_when_the_source_is_created(tmp_path):
    with pytest.raises(ValueError, match='Invalid format name "xml"'):
        LocalFileSource(tmp_path, file_format="xml")
    with pytest.raises(ValueError, match="Unknown compression 'zip'"):
        LocalFileSource(tmp_path, compression="zip")


def test_partition_folders_need_a_partition_counter(tmp_path):
    class Listing(FileSource):
        def get_file_list(self, filepath):
            return [filepath]

        def read_file(self, filepath):
            return io.BytesIO(filepath.read_bytes())

    assert Listing(tmp_path).default_topic().create_config is None
    with pytest.raises(NotImplementedError, match='Listing must implement "file_partition_counter"'):
        Listing(tmp_path, has_partition_folders=True).default_topic()
