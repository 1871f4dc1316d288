"""The lake on a real S3 server with a real Iceberg REST catalog (SeaweedFS ``weed mini``),
written by a Spark query and read back through the catalog, s3fs and DuckDB."""

from __future__ import annotations

import json

import duckdb
import pytest
import s3fs

from streamspark.sinks.datalake import LakeCatalogError, TSDataLakeSink
from tests.servers.seaweedfs import SeaweedFS

T0 = 1_704_067_200_000


@pytest.fixture(scope="module")
def seaweed():
    with SeaweedFS() as server:
        yield server


def _sink(seaweed, table, **kw):
    return TSDataLakeSink(
        s3_prefix=f"s3://{seaweed.bucket}/data-lake/time-series",
        table_name=table,
        hive_columns=["year", "month", "day"],
        timestamp_column="ts_ms",
        storage_options=seaweed.storage_options,
        catalog_url=seaweed.catalog_url,
        catalog_properties=seaweed.catalog_properties,
        **kw,
    )


def test_spark_query_to_s3_and_rest_catalog(seaweed, make_app, kafka):
    topic = kafka.new_topic(partitions=2)
    rows = [{"sensor": f"s{i % 4}", "ts_ms": T0 + i * 3_600_000 * 7, "temp": 10.5 + i} for i in range(20)]
    kafka.produce(
        topic, [{"value": json.dumps(r).encode(), "key": r["sensor"].encode(), "partition": i % 2} for i, r in enumerate(rows)]
    )
    sink = _sink(seaweed, "readings")
    app = make_app()
    app.dataframe(app.topic(topic)).sink(sink)
    app.run(timeout=3)

    fs = s3fs.S3FileSystem(**seaweed.storage_options)
    files = fs.glob(f"{seaweed.bucket}/data-lake/time-series/readings/year=2024/month=01/*/*.parquet")
    assert files and all("/day=" in f for f in files)
    con = duckdb.connect()
    con.register_filesystem(fs)
    got = con.sql(
        f"select sensor, temp, day from read_parquet('s3://{seaweed.bucket}/data-lake/time-series/readings/**/*.parquet',"
        " hive_partitioning=true) order by temp"
    ).fetchall()
    assert [(s, t) for s, t, _ in got] == [(r["sensor"], r["temp"]) for r in rows]

    table = sink.catalog.load_table()
    assert sorted(table.scan().to_arrow().column("temp").to_pylist()) == [r["temp"] for r in rows]
    assert [f.name for f in table.spec().fields] == ["year", "month", "day"]
    # a second sink on the same table with another partitioning is refused
    with pytest.raises(LakeCatalogError, match="Partition spec mismatch"):
        TSDataLakeSink(
            s3_prefix=f"s3://{seaweed.bucket}/other",
            table_name="readings",
            hive_columns=["year"],
            storage_options=seaweed.storage_options,
            catalog_url=seaweed.catalog_url,
            catalog_properties=seaweed.catalog_properties,
        ).setup()


def test_compaction_through_the_rest_catalog(seaweed):
    sink = _sink(seaweed, "small_files")
    sink.setup()
    for i in range(3):
        sink.add({"ts_ms": T0, "i": i}, b"k", 0, None, "t", 0, i)
        sink.flush()
    assert sink.compact(min_age_ms=0) == {"partitions": 1, "files_removed": 3, "files_written": 1, "rows": 3}
    assert sorted(sink.catalog.load_table().scan().to_arrow().column("i").to_pylist()) == [0, 1, 2]
    fs = s3fs.S3FileSystem(**seaweed.storage_options)
    assert len(fs.glob(f"{seaweed.bucket}/data-lake/time-series/small_files/**/*.parquet")) == 1


def test_wrong_credentials_are_a_clear_error(seaweed):
    sink = TSDataLakeSink(
        s3_prefix=f"s3://{seaweed.bucket}/x",
        table_name="t",
        catalog_url=seaweed.catalog_url,
        storage_options={**seaweed.storage_options, "secret": "wrong"},
        catalog_properties=seaweed.catalog_properties,
        auto_create_bucket=False,
    )
    with pytest.raises((ConnectionError, PermissionError, FileNotFoundError)):
        sink.setup()
