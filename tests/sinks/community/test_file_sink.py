"""FileSink: formats, destinations (local, S3 on SeaweedFS, Azure on Azurite), Spark end to end,
backpressure on write errors, exactly-once file names on replay."""

from __future__ import annotations

import gzip
import io
import json
import os
import threading
import time

import pyarrow.parquet as pq
import pytest

from streamspark.sinks.base import SinkBatch
from streamspark.sinks.community.file import (
    AzureFileSink,
    LocalFileSink,
    S3FileSink,
    AzureContainerNotFoundError,
    AzureFileDestination,
    FileSink,
    InvalidFormatError,
    JSONFormat,
    LocalDestination,
    ParquetFormat,
    S3BucketNotFoundError,
    S3Destination,
)
from tests.servers import Azurite, SeaweedFS

from ...conftest import json_messages


def batch(*values, topic="t", partition=0, start=0):
    b = SinkBatch(topic, partition)
    for i, v in enumerate(values):
        b.append(value=v, key=f"k{i}".encode(), timestamp=100 + i, headers=None, offset=start + i)
    return b


def test_formats():
    b = batch({"a": 1}, {"b": 2})
    lines = JSONFormat().serialize(b).decode().splitlines()
    assert [json.loads(line) for line in lines] == [
        {"_timestamp": 100, "_key": "k0", "_value": {"a": 1}},
        {"_timestamp": 101, "_key": "k1", "_value": {"b": 2}},
    ]
    gz = JSONFormat(compress=True)
    assert gz.file_extension == ".jsonl.gz" and gzip.decompress(gz.serialize(b)).decode().count("\n") == 2
    custom = JSONFormat(dumps=lambda o: json.dumps(o, sort_keys=True, indent=None))
    assert custom.serialize(b).startswith(b'{"_key": "k0"')
    table = pq.read_table(io.BytesIO(ParquetFormat(compression="zstd").serialize(b)))
    assert table.to_pylist() == [
        {"_timestamp": 100, "_key": "k0", "a": 1, "b": None},
        {"_timestamp": 101, "_key": "k1", "a": None, "b": 2},
    ]
    with pytest.raises(ValueError):
        ParquetFormat(compression="rar")
    with pytest.raises(InvalidFormatError):
        FileSink(format="xml")
    with pytest.raises(ValueError, match="append"):
        FileSink(format="parquet", destination=LocalDestination(append=True))
    with pytest.raises(ValueError, match="directory"):
        FileSink(directory="../etc;rm")


def test_formats_and_destinations_import_from_their_modules():
    from streamspark.sinks.community.file.destinations.azure import AzureFileDestination as Azure
    from streamspark.sinks.community.file.destinations.base import Destination
    from streamspark.sinks.community.file.destinations.local import LocalDestination as Local
    from streamspark.sinks.community.file.destinations.s3 import S3Destination as S3
    from streamspark.sinks.community.file.formats import resolve_format
    from streamspark.sinks.community.file.formats.base import Format
    from streamspark.sinks.community.file.formats.json import JSONFormat as Json
    from streamspark.sinks.community.file.formats.parquet import ParquetFormat as Parquet

    assert (Json, Parquet, Local, S3, Azure) == (JSONFormat, ParquetFormat, LocalDestination, S3Destination, AzureFileDestination)
    assert issubclass(Json, Format) and issubclass(S3, Destination)
    assert isinstance(resolve_format(format="parquet"), Parquet)


def test_connect_callbacks_report_the_destination_check():
    class Unreachable(LocalDestination):
        def setup(self):
            raise ConnectionError("destination down")

    failures, successes = [], []
    FileSink(destination=Unreachable(), on_client_connect_failure=failures.append).start()
    FileSink(on_client_connect_success=lambda: successes.append("ok")).start()
    assert [str(exc) for exc in failures] == ["destination down"] and successes == ["ok"]


def test_local_files_per_partition_named_by_offset_and_append(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    sink = FileSink(directory="out", format="json")
    sink.add({"a": 1}, b"k", 1, None, "t", 0, 10)
    sink.add({"a": 2}, b"k", 2, None, "t", 1, 7)
    sink.flush()
    assert sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*.jsonl")) == [
        "out/t/0/0000000000000000010.jsonl",
        "out/t/1/0000000000000000007.jsonl",
    ]
    appending = FileSink(directory="out", format="json", destination=LocalDestination(append=True))
    appending.add({"a": 3}, b"k", 3, None, "t", 0, 11)
    appending.flush()
    assert (tmp_path / "out/t/0/0000000000000000010.jsonl").read_text().count("\n") == 2


def test_spark_pipeline_backpressure_then_delivery(make_app, kafka, tmp_path, monkeypatch):
    """The partition directory is blocked by a file: writes fail, the batch is retried every 5 s
    (backpressure) and succeeds once the obstacle is gone, with every record once."""
    monkeypatch.chdir(tmp_path)
    topic = kafka.new_topic()
    folder = topic.replace("-", "_")  # the topic's folder: "-" becomes "_", as the reference
    kafka.produce(topic, json_messages([{"n": i} for i in range(5)]))
    (tmp_path / "files" / folder).mkdir(parents=True)
    (tmp_path / "files" / folder / "0").write_text("in the way")
    threading.Timer(8, lambda: os.remove(tmp_path / "files" / folder / "0")).start()
    app = make_app()
    app.dataframe(app.topic(topic)).sink(FileSink(directory="files", format="parquet"))
    started = time.monotonic()
    app.run(timeout=3)
    assert time.monotonic() - started > 8
    files = list((tmp_path / "files" / folder / "0").glob("*.parquet"))
    rows = [r for f in files for r in pq.read_table(f).to_pylist()]
    assert sorted(r["n"] for r in rows) == list(range(5))


@pytest.fixture(scope="module")
def seaweed():
    with SeaweedFS() as server:
        yield server


def test_s3_destination(seaweed, monkeypatch):
    import s3fs

    monkeypatch.setenv("AWS_ACCESS_KEY_ID", seaweed.access_key)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", seaweed.secret_key)
    monkeypatch.setenv("AWS_ENDPOINT_URL_S3", seaweed.endpoint)
    monkeypatch.setenv("AWS_REGION", "us-east-1")
    sink = FileSink(directory="archive", format=JSONFormat(compress=True), destination=S3Destination(seaweed.bucket))
    sink.setup()
    sink.add({"a": 1}, b"k", 1, None, "events", 3, 40)
    sink.flush()
    fs = s3fs.S3FileSystem(**seaweed.storage_options)
    data = fs.cat_file(f"{seaweed.bucket}/archive/events/3/0000000000000000040.jsonl.gz")
    assert json.loads(gzip.decompress(data)) == {"_timestamp": 1, "_key": "k", "_value": {"a": 1}}
    with pytest.raises(S3BucketNotFoundError):
        FileSink(destination=S3Destination("no-such-bucket")).setup()
    # the same through S3FileSink, the credentials given as arguments
    monkeypatch.delenv("AWS_ACCESS_KEY_ID")
    sink = S3FileSink(
        seaweed.bucket,
        aws_access_key_id=seaweed.access_key,
        aws_secret_access_key=seaweed.secret_key,
        endpoint_url=seaweed.endpoint,
        directory="named",
    )
    sink.setup()
    sink.add({"b": 2}, b"k", 1, None, "events", 0, 7)
    sink.flush()
    assert json.loads(fs.cat_file(f"{seaweed.bucket}/named/events/0/0000000000000000007.jsonl")) == {
        "_timestamp": 1,
        "_key": "k",
        "_value": {"b": 2},
    }


def test_azure_destination():
    import adlfs

    with Azurite() as az:
        fs = adlfs.AzureBlobFileSystem(connection_string=az.connection_string)
        fs.mkdir("archive")
        sink = FileSink(directory="x", format="parquet", destination=AzureFileDestination(az.connection_string, "archive"))
        sink.setup()
        sink.add({"a": 1}, b"k", 1, None, "events", 0, 5)
        sink.flush()
        rows = pq.read_table(io.BytesIO(fs.cat_file("archive/x/events/0/0000000000000000005.parquet"))).to_pylist()
        assert rows == [{"_timestamp": 1, "_key": "k", "a": 1}]
        with pytest.raises(AzureContainerNotFoundError):
            FileSink(destination=AzureFileDestination(az.connection_string, "missing")).setup()
        sink = AzureFileSink(az.connection_string, "archive", directory="y", format="parquet")
        sink.setup()
        sink.add({"b": 2}, b"k", 1, None, "events", 0, 6)
        sink.flush()
        rows = pq.read_table(io.BytesIO(fs.cat_file("archive/y/events/0/0000000000000000006.parquet"))).to_pylist()
        assert rows == [{"_timestamp": 1, "_key": "k", "b": 2}]


def test_topic_folders_replace_unsafe_characters_as_the_reference(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    sink = LocalFileSink(directory="out")
    sink.add({"a": 1}, b"k", 1, None, "sensor-readings:v1", 0, 5)
    sink.flush()
    assert [str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*.jsonl")] == [
        "out/sensor_readings_v1/0/0000000000000000005.jsonl"
    ]


def test_json_lines_keep_nan_infinity_and_non_ascii_text():
    data = JSONFormat().serialize(batch({"x": float("nan"), "y": float("-inf"), "name": "Zürich", 3: 1.5}))
    assert data == b'{"_timestamp":100,"_key":"k0","_value":{"x":NaN,"y":-Infinity,"name":"Z\xc3\xbcrich","3":1.5}}\n'


def test_local_file_sink(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    sink = LocalFileSink(append=True, directory="out")
    sink.setup()
    for offset in (3, 4):
        sink.add({"n": offset}, b"k", 1, None, "events", 0, offset)
        sink.flush()  # two batches, appended to the first one's file
    lines = (tmp_path / "out" / "events" / "0" / "0000000000000000003.jsonl").read_text().splitlines()
    assert [json.loads(line)["_value"] for line in lines] == [{"n": 3}, {"n": 4}]
    with pytest.raises(ValueError, match="append"):
        LocalFileSink(append=True, format="parquet")


def test_named_file_sinks_take_the_references_parameters():
    import inspect

    assert list(inspect.signature(LocalFileSink).parameters) == ["append", "directory", "format"]
    assert list(inspect.signature(S3FileSink).parameters)[:7] == [
        "bucket",
        "aws_access_key_id",
        "aws_secret_access_key",
        "region_name",
        "endpoint_url",
        "directory",
        "format",
    ]
    assert list(inspect.signature(AzureFileSink).parameters)[:4] == [
        "azure_connection_string",
        "azure_container",
        "directory",
        "format",
    ]
