"""Every server-backed sink in ONE streaming pipeline on the real broker and Spark.

The first run's micro-batch fails after the real sinks flushed (a sink placed last refuses
once); the restart replays the batch. Then each server holds every record, read back with its
own client: exactly once for the transactional sinks (PostgreSQL, Iceberg: delivery tokens),
once in effect for the idempotent ones (Redis, Elasticsearch, MongoDB, InfluxDB: same keys),
and at least once for Kinesis (duplicates counted) and BigQuery (insertId, best effort).
Emulators: MongoDB (nx-27017), OpenSearch (osmem), BigQuery (bqemulator), Kinesis (moto).
"""

from __future__ import annotations

import json
import urllib.request

import psycopg2
import pymongo
import pytest
import redis
from pyiceberg.catalog import load_catalog

from streamspark.exceptions import ProcessingError
from streamspark.sinks.community.bigquery import BigQuerySink
from streamspark.sinks.community.elasticsearch import ElasticsearchSink
from streamspark.sinks.community.iceberg import IcebergCatalogConfig, IcebergSink
from streamspark.sinks.community.influxdb1 import InfluxDB1Sink
from streamspark.sinks.community.kinesis import KinesisSink
from streamspark.sinks.community.mongodb import MongoDBSink
from streamspark.sinks.community.postgresql import PostgreSQLSink
from streamspark.sinks.community.redis import RedisSink
from streamspark.sinks.core.influxdb3 import InfluxDB3Sink

from ..test_sinks_e2e import FlakyFileSink
from .test_cloud import AWS, new_stream, read_stream
from .test_influxdb import _Recorder, recorder  # noqa: F401  (the fixture)

N = 40


def test_all_server_sinks_in_one_pipeline_survive_a_failed_batch(
    make_app, kafka, tmp_path, postgres, redis_server, influxdb, moto, mongo, opensearch, bigquery_emulator, recorder
):
    from google.api_core.client_options import ClientOptions
    from google.auth.credentials import AnonymousCredentials

    topic = kafka.new_topic(partitions=2)
    kafka.produce(
        topic,
        [
            {
                "value": json.dumps({"i": i, "sensor": f"s{i % 4}", "v": i * 0.5}).encode(),
                "key": f"id{i}".encode(),
                "partition": i % 2,
                "timestamp": 1_700_000_000_000 + i * 1000,
            }
            for i in range(N)
        ],
    )
    influxdb.query("CREATE DATABASE e2e")
    stream = new_stream(moto, "e2e")
    iceberg = IcebergCatalogConfig(
        name="e2e", properties={"type": "sql", "uri": f"sqlite:///{tmp_path}/cat.db", "warehouse": f"file://{tmp_path}/wh"}
    )
    sinks = [
        PostgreSQLSink(
            host="127.0.0.1", port=postgres.port, dbname="postgres", user=postgres.user, password="", table_name="e2e"
        ),
        RedisSink(host="127.0.0.1", port=redis_server.port, db=5),
        InfluxDB1Sink(host=influxdb.url, database="e2e", measurement="readings", tags_keys=["sensor"], fields_keys=["i", "v"]),
        ElasticsearchSink(url=opensearch.url, index="e2e"),
        MongoDBSink(host="127.0.0.1", port=mongo.port, db="e2e", collection="readings"),
        BigQuerySink(
            project_id=bigquery_emulator.project,
            location="US",
            dataset_id="e2e",
            table_name="readings",
            credentials=AnonymousCredentials(),
            client_options=ClientOptions(api_endpoint=bigquery_emulator.url),
        ),
        KinesisSink(stream_name=stream, aws_endpoint_url=moto.url, key_serializer=str, **AWS),  # str keys here
        IcebergSink(table_name="e2e.readings", config=iceberg, data_catalog_spec="pyiceberg"),
        # InfluxDB 3 at its HTTP boundary (a recording server in this process; none installs here)
        InfluxDB3Sink(
            token="t",
            host=f"http://127.0.0.1:{recorder.server_address[1]}",
            organization_id="o",
            database="e2e",
            measurement="readings",
            tags_keys=["sensor"],
            fields_keys=["i"],
        ),
    ]
    marker = tmp_path / "attempts"

    def build():
        app = make_app(consumer_group="catalogue-e2e", state_dir=str(tmp_path / "state"))
        sdf = app.dataframe(app.topic(topic, key_deserializer="str"))
        for sink in sinks:
            sdf.sink(sink)
        sdf.sink(FlakyFileSink(str(tmp_path / "flaky.jsonl"), str(marker), fail_times=1, backpressure=False))
        return app

    with pytest.raises(ProcessingError, match="sink failed: ConnectionError: destination refused the write"):
        build().run(count=N * (len(sinks) + 1), timeout=120)
    assert kafka.committed("catalogue-e2e", topic)[0] < 0
    build().run(count=N * (len(sinks) + 1), timeout=120)

    expected = list(range(N))
    with psycopg2.connect(host="127.0.0.1", port=postgres.port, user=postgres.user, dbname="postgres") as conn:
        with conn.cursor() as cur:
            cur.execute('SELECT i, "__key" FROM e2e ORDER BY i')
            rows = cur.fetchall()
            cur.execute("SELECT count(*) FROM streamspark_sink_commits")
            tokens = cur.fetchone()[0]
    assert [r[0] for r in rows] == expected, "PostgreSQL: every record exactly once"
    assert rows[3][1] == "id3" and tokens >= 1

    r = redis.Redis(port=redis_server.port, db=5)
    assert sorted(json.loads(r.get(f"id{i}"))["i"] for i in range(N)) == expected and r.dbsize() == N

    series = influxdb.query("SELECT count(i) FROM readings GROUP BY sensor", db="e2e")["results"][0]["series"]
    assert {s["tags"]["sensor"]: s["values"][0][1] for s in series} == {f"s{k}": N // 4 for k in range(4)}

    urllib.request.urlopen(urllib.request.Request(f"{opensearch.url}/e2e/_refresh", method="POST")).read()
    with urllib.request.urlopen(f"{opensearch.url}/e2e/_search?size=1000") as resp:
        hits = json.loads(resp.read())["hits"]["hits"]
    assert sorted(h["_source"]["i"] for h in hits) == expected and {h["_id"] for h in hits} == {f"id{i}" for i in range(N)}

    docs = list(pymongo.MongoClient("127.0.0.1", mongo.port)["e2e"]["readings"].find())
    assert sorted(d["i"] for d in docs) == expected and {d["_id"] for d in docs} == {f"id{i}" for i in range(N)}

    from google.cloud import bigquery

    bq = bigquery.Client(
        project=bigquery_emulator.project,
        credentials=AnonymousCredentials(),
        client_options=ClientOptions(api_endpoint=bigquery_emulator.url),
    )
    bq_rows = [dict(row) for row in bq.query(f"SELECT i FROM `{bigquery_emulator.project}.e2e.readings`").result()]
    bq_ids = [row["i"] for row in bq_rows]
    assert set(bq_ids) == set(expected), "BigQuery: nothing lost"
    print(f"BigQuery (emulator): {len(bq_ids) - N} duplicate row(s) after the replay")

    kinesis_ids = [v["i"] for _, v in read_stream(moto, stream)]
    assert set(kinesis_ids) == set(expected), "Kinesis: nothing lost"
    print(f"Kinesis: {len(kinesis_ids) - N} duplicate record(s) after the replay (at-least-once)")

    lines = [line for _, _, body in _Recorder.requests for line in body.splitlines()]
    assert {int(line.split(" ")[1].removeprefix("i=").removesuffix("i")) for line in lines} == set(expected)
    assert all(line.startswith("readings,sensor=s") for line in lines)

    table = load_catalog("e2e", **iceberg.properties).load_table("e2e.readings")
    assert sorted(table.scan().to_arrow().column("i").to_pylist()) == expected, "Iceberg: every record exactly once"
