"""KinesisSink (moto emulator), BigQuerySink (bqemulator), PubSubSink and Neo4jSink (nothing
installable here: tested at their client boundary, labelled as such)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import boto3
import pytest

from streamspark.sinks.community.bigquery import BigQueryInsertError, BigQuerySink
from streamspark.sinks.community.kinesis import KinesisSink, KinesisStreamNotFoundError
from streamspark.sinks.community.neo4j import Neo4jSink
from streamspark.sinks.community.pubsub import PubSubSink, PubSubTopicNotFoundError

from .conftest import feed, make_batch

AWS = {"aws_access_key_id": "test", "aws_secret_access_key": "test", "region_name": "us-east-1"}


def kinesis_client(moto):
    return boto3.client("kinesis", endpoint_url=moto.url, **AWS)


def read_stream(moto, stream):
    client = kinesis_client(moto)
    out = []
    for shard in client.list_shards(StreamName=stream)["Shards"]:
        it = client.get_shard_iterator(StreamName=stream, ShardId=shard["ShardId"], ShardIteratorType="TRIM_HORIZON")[
            "ShardIterator"
        ]
        while it:
            answer = client.get_records(ShardIterator=it, Limit=10000)
            out += [(r["PartitionKey"], json.loads(r["Data"])) for r in answer["Records"]]
            if not answer["Records"]:
                break
            it = answer.get("NextShardIterator")
    return out


def new_stream(moto, name, shards=2):
    client = kinesis_client(moto)
    client.create_stream(StreamName=name, ShardCount=shards)
    client.get_waiter("stream_exists").wait(StreamName=name, WaiterConfig={"Delay": 0.2})
    return name


def test_kinesis_sends_every_500_and_on_flush_emulator(moto):
    stream = new_stream(moto, "events")
    sink = KinesisSink(stream_name=stream, aws_endpoint_url=moto.url, **AWS)
    sink.start()
    feed(sink, make_batch(*[{"i": i} for i in range(1203)], keys=[f"k{i % 7}".encode() for i in range(1203)]))
    deadline = time.monotonic() + 10
    while len(read_stream(moto, stream)) < 1000 and time.monotonic() < deadline:
        time.sleep(0.2)
    assert len(read_stream(moto, stream)) == 1000  # two full PutRecords went out before the flush
    sink.flush()
    records = read_stream(moto, stream)
    assert sorted(v["i"] for _, v in records) == list(range(1203))
    assert {k for k, _ in records} == {f"k{i}" for i in range(7)}


def test_kinesis_missing_stream_and_env_credentials_emulator(moto, monkeypatch):
    monkeypatch.setenv("AWS_ENDPOINT_URL_KINESIS", moto.url)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "test")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "test")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    with pytest.raises(KinesisStreamNotFoundError, match="'nope' does not exist"):
        KinesisSink(stream_name="nope").start()


def test_aws_settings_default_to_the_environment_at_import():
    code = (
        "import inspect\n"
        "from streamspark.sinks.community.kinesis import KinesisSink\n"
        "from streamspark.sinks.community.file.destinations.s3 import S3Destination\n"
        "for cls in (KinesisSink, S3Destination):\n"
        "    print(sorted((n, p.default) for n, p in inspect.signature(cls).parameters.items()"
        " if n.startswith(('aws', 'region', 'endpoint'))))\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env.update(
        AWS_ACCESS_KEY_ID="id",
        AWS_SECRET_ACCESS_KEY="secret",
        AWS_DEFAULT_REGION="eu-north-1",
        AWS_ENDPOINT_URL_KINESIS="http://kinesis",
        AWS_ENDPOINT_URL_S3="http://s3",
    )
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.splitlines() == [
        "[('aws_access_key_id', 'id'), ('aws_endpoint_url', 'http://kinesis'), ('aws_secret_access_key', 'secret'),"
        " ('region_name', 'eu-north-1')]",
        "[('aws_access_key_id', 'id'), ('aws_secret_access_key', 'secret'), ('endpoint_url', 'http://s3'),"
        " ('region_name', 'eu-north-1')]",
    ]


def bq_sink(emulator, **kw):
    from google.api_core.client_options import ClientOptions
    from google.auth.credentials import AnonymousCredentials

    return BigQuerySink(
        project_id=emulator.project,
        location="US",
        dataset_id=kw.pop("dataset", "ds"),
        table_name=kw.pop("table", "events"),
        credentials=AnonymousCredentials(),
        client_options=ClientOptions(api_endpoint=emulator.url),
        **kw,
    )


def bq_rows(sink, table):
    return [dict(r) for r in sink._client.query(f"SELECT * FROM `{table}` ORDER BY n").result()]


def test_bigquery_creates_dataset_table_and_inserts_emulator(bigquery_emulator):
    sink = bq_sink(bigquery_emulator)
    sink.start()
    feed(sink, make_batch({"n": 1, "name": "a", "x": 0.5, "ok": True}, {"n": 2, "name": None, "x": 1.0, "ok": False}))
    sink.flush()
    table = sink._client.get_table(f"{bigquery_emulator.project}.ds.events")
    assert {f.name: f.field_type for f in table.schema} == {
        "timestamp": "TIMESTAMP",
        "__key": "STRING",
        "n": "INTEGER",
        "name": "STRING",
        "x": "FLOAT",
        "ok": "BOOLEAN",
    }
    rows = bq_rows(sink, f"{bigquery_emulator.project}.ds.events")
    assert [(r["__key"], r["n"], r["name"], r["x"], r["ok"]) for r in rows] == [
        ("k0", 1, "a", 0.5, True),
        ("k1", 2, None, 1.0, False),
    ]
    assert rows[0]["timestamp"].isoformat() == "2023-11-14T22:13:20+00:00"


def test_bigquery_needs_the_table_without_auto_update_emulator(bigquery_emulator):
    with pytest.raises(BigQueryInsertError, match="does not exist \\(schema_auto_update=False\\)"):
        bq_sink(bigquery_emulator, dataset="ds", table="absent", schema_auto_update=False).start()
    sink = bq_sink(bigquery_emulator, table="strict")
    sink.start()
    with pytest.raises(TypeError, match='Sink "BigQuerySink" supports only dictionaries'):
        feed(sink, make_batch([1, 2]))


# -- client-boundary tests (no Pub/Sub emulator or Neo4j server installable here) ---------------
class _Future:
    def __init__(self, error=None):
        self.error = error

    def result(self, timeout=None):
        if self.error:
            raise self.error
        return "id"


class FakePublisher:
    """Stands in for ``pubsub_v1.PublisherClient`` (client boundary)."""

    published: list = []
    topics = {"projects/p/topics/events"}
    fail = None

    def __init__(self, **kwargs):
        self.kwargs = kwargs

    def topic_path(self, project, topic):
        return f"projects/{project}/topics/{topic}"

    def get_topic(self, request):
        from google.api_core.exceptions import NotFound

        if request["topic"] not in self.topics:
            raise NotFound("topic")

    def publish(self, topic, data, **attrs):
        type(self).published.append((topic, data, attrs))
        return _Future(type(self).fail)


def test_pubsub_publishes_and_flush_waits_client_boundary(monkeypatch):
    from google.cloud import pubsub_v1

    monkeypatch.setattr(pubsub_v1, "PublisherClient", FakePublisher)
    FakePublisher.published, FakePublisher.fail = [], None
    sink = PubSubSink(project_id="p", topic_id="events", flush_timeout=1)
    sink.start()
    feed(sink, make_batch({"a": 1}))
    sink.flush()
    assert FakePublisher.published == [
        ("projects/p/topics/events", b'{"a": 1}', {"timestamp": "1700000000000", "key": "k0", "h": "v"})
    ]
    FakePublisher.fail = TimeoutError("publish timed out")
    feed(sink, make_batch({"a": 2}))
    with pytest.raises(TimeoutError):
        sink.flush()  # a failed publish fails the flush (the batch is replayed)
    with pytest.raises(PubSubTopicNotFoundError, match="projects/p/topics/missing"):
        PubSubSink(project_id="p", topic_id="missing").start()


class FakeTx:
    def __init__(self, log, fail_on):
        self.log, self.fail_on, self.runs = log, fail_on, 0

    def run(self, query, records):
        self.runs += 1
        if self.runs == self.fail_on:
            raise RuntimeError("constraint violated")
        self.log.append(("run", query, records))
        return self

    def consume(self):
        return None

    def commit(self):
        self.log.append(("commit",))

    def rollback(self):
        self.log.append(("rollback",))

    def close(self):
        pass


class FakeDriver:
    """Stands in for ``neo4j.GraphDatabase.driver`` (client boundary)."""

    def __init__(self, fail_on=0):
        self.log, self.fail_on = [], fail_on

    def verify_connectivity(self):
        pass

    def session(self):
        driver = self

        class Session:
            def __enter__(self):
                return self

            def __exit__(self, *exc):
                return False

            def begin_transaction(self):
                return FakeTx(driver.log, driver.fail_on)

        return Session()


def test_neo4j_chunks_commit_together_or_not_at_all_client_boundary():
    sink = Neo4jSink(
        host="localhost",
        port=7687,
        username="neo4j",
        password="pw",
        chunk_size=2,
        cypher_query="MERGE (p:Person {name: event.name.first}) SET p.key = __key",
    )
    sink._client = FakeDriver()
    feed(sink, make_batch({"name": {"first": "a"}}, {"name": {"first": "b"}}, {"name": {"first": "c"}}))
    sink.flush()
    runs = [e for e in sink._client.log if e[0] == "run"]
    assert [len(r[2]) for r in runs] == [2, 1] and sink._client.log[-1] == ("commit",)
    query = runs[0][1]
    assert query.startswith("UNWIND $records AS record WITH record.event AS event, record.__key AS __key")
    assert query.endswith("MERGE (p:Person {name: event.name.first}) SET p.key = __key")
    assert runs[0][2][0] == {
        "event": {"name": {"first": "a"}},
        "__value": {"name": {"first": "a"}},
        "__key": "k0",
        "__headers": {"h": "v"},
        "__timestamp": 1_700_000_000_000,
    }
    sink._client = FakeDriver(fail_on=2)  # the second chunk fails: the first is rolled back with it
    feed(sink, make_batch({"name": {"first": "a"}}, {"name": {"first": "b"}}, {"name": {"first": "c"}}))
    with pytest.raises(RuntimeError, match="constraint violated"):
        sink.flush()
    assert sink._client.log[-1] == ("rollback",) and ("commit",) not in sink._client.log


def test_neo4j_connect_callbacks_are_not_driver_options_client_boundary(monkeypatch):
    import neo4j

    options = {}

    def driver(uri, auth, **kwargs):
        options.update(kwargs)
        return FakeDriver()

    monkeypatch.setattr(neo4j.GraphDatabase, "driver", driver)
    connected = []
    Neo4jSink(
        host="localhost",
        port=7687,
        username="neo4j",
        password="pw",
        cypher_query="RETURN 1",
        max_connection_pool_size=5,
        on_client_connect_success=lambda: connected.append(True),
    ).start()
    assert connected == [True] and options == {"max_connection_pool_size": 5}
