"""KinesisSource against moto server (an AWS emulator on 127.0.0.1, not AWS): a Spark pipeline
reading a stream, resuming from the committed sequence numbers, and bad input (missing stream,
unreachable endpoint)."""

from __future__ import annotations

import json
import threading
import uuid

import pytest

from streamspark.sources import SourceInputError
from streamspark.sources.base.store import SourceStorePartition
from streamspark.sources.community.kinesis import KinesisSource
from streamspark.testing.broker import free_port
from tests.servers.servers import MotoServer

from ..conftest import RecordingProducer
from .conftest import run_until

AWS = {"aws_region": "us-east-1", "aws_access_key_id": "test", "aws_secret_access_key": "test"}


@pytest.fixture(scope="module")
def moto():
    server = MotoServer().start()
    yield server
    server.stop()


@pytest.fixture
def kinesis(moto):
    import boto3

    return boto3.client(
        "kinesis", endpoint_url=moto.url, region_name="us-east-1", aws_access_key_id="test", aws_secret_access_key="test"
    )


def new_stream(kinesis, shards: int) -> str:
    name = f"s-{uuid.uuid4().hex[:8]}"
    kinesis.create_stream(StreamName=name, ShardCount=shards)
    kinesis.get_waiter("stream_exists").wait(StreamName=name, WaiterConfig={"Delay": 0.2})
    return name


def put(kinesis, stream, *records):
    for key, value in records:
        kinesis.put_record(StreamName=stream, PartitionKey=key, Data=json.dumps(value).encode())


def test_spark_pipeline_reads_a_stream_emulator(make_app, kafka, moto, kinesis):
    stream = new_stream(kinesis, shards=2)
    put(kinesis, stream, *[(f"k{i}", {"n": i}) for i in range(4)])
    out = kafka.new_topic()
    app = make_app()
    source = KinesisSource(stream, aws_endpoint_url=moto.url, auto_offset_reset="earliest", commit_interval=0.5, **AWS)
    sdf = app.dataframe(source=source)
    assert sdf.topic.name == f"source__kinesis_{stream}"
    sdf = sdf.apply(lambda data: {"n2": json.loads(data)["n"] * 2})  # values arrive as bytes
    sdf.to_topic(app.topic(out))
    app.run(count=4, timeout=60)
    got = sorted((m.key(), json.loads(m.value())["n2"]) for m in kafka.consume(out, expected=4))
    assert got == [(b"k0", 0), (b"k1", 2), (b"k2", 4), (b"k3", 6)]


# --- in process (no broker) ---------------------------------------------------------------------------


def test_a_restart_resumes_after_the_committed_sequence_numbers_emulator(moto, kinesis):
    stream = new_stream(kinesis, shards=2)
    put(kinesis, stream, ("a", 1), ("b", 2), ("c", 3))
    store = SourceStorePartition("changelog", producer=None, name="kinesis")
    first = run_until(KinesisSource(stream, aws_endpoint_url=moto.url, auto_offset_reset="earliest", **AWS), 3, store)
    assert sorted((m["key"], json.loads(m["value"])) for m in first) == [(b"a", 1), (b"b", 2), (b"c", 3)]
    assert all(isinstance(m["timestamp"], int) and m["timestamp"] > 1_600_000_000_000 for m in first)
    assert len(store.data) == 2  # a sequence number per shard, committed by the final flush
    put(kinesis, stream, ("d", 4))
    again = run_until(KinesisSource(stream, aws_endpoint_url=moto.url, auto_offset_reset="earliest", **AWS), 1, store)
    assert [(m["key"], json.loads(m["value"])) for m in again] == [(b"d", 4)]


def test_latest_skips_what_the_stream_held_before_the_start_emulator(moto, kinesis):
    stream = new_stream(kinesis, shards=1)
    put(kinesis, stream, ("old", 0))
    source = KinesisSource(stream, aws_endpoint_url=moto.url, **AWS)
    store = SourceStorePartition("changelog", producer=None, name="kinesis")
    threading.Timer(1.0, put, (kinesis, stream, ("new", 1))).start()
    assert [m["key"] for m in run_until(source, 1, store)] == [b"new"]


@pytest.mark.parametrize(
    "stream, endpoint, reason",
    [
        ("nope", None, "it does not exist"),
        ("events", "down", "Could not connect to the endpoint URL"),
    ],
)
def test_a_missing_stream_or_an_unreachable_endpoint_names_the_source_and_the_stream_emulator(moto, stream, endpoint, reason):
    url = f"http://127.0.0.1:{free_port()}" if endpoint == "down" else moto.url
    source = KinesisSource(stream, aws_endpoint_url=url, **AWS)
    source.configure(
        source.default_topic(),
        RecordingProducer(),
        store_partition=SourceStorePartition("changelog", producer=None, name="kinesis"),
    )
    with pytest.raises(SourceInputError, match=f'Source "kinesis_{stream}" cannot read the Kinesis stream "{stream}": {reason}'):
        source.start()


def test_bad_auto_offset_reset():
    with pytest.raises(ValueError, match='auto_offset_reset must be "earliest" or "latest"'):
        KinesisSource("events", auto_offset_reset="beginning")  # type: ignore[arg-type]
