"""The lake on Azure Blob storage (a real Azurite server), registered in a SQL catalog, written
by a Spark query; read back with adlfs + pyarrow and through the catalog."""

from __future__ import annotations

import io
import json

import adlfs
import pyarrow.parquet as pq
import pytest

from streamspark.sinks.datalake import TSDataLakeSink
from tests.servers.azurite import Azurite

T0 = 1_704_067_200_000


@pytest.fixture(scope="module")
def azurite():
    with Azurite() as server:
        yield server


def test_spark_query_to_azure_blob(azurite, make_app, kafka, tmp_path):
    topic = kafka.new_topic()
    kafka.produce(
        topic, [{"value": json.dumps({"ts_ms": T0 + i * 86_400_000, "n": i}).encode(), "key": b"dev-1"} for i in range(5)]
    )
    sink = TSDataLakeSink(
        s3_prefix="az://lake/time-series",
        table_name="events",
        hive_columns=["year", "month", "day"],
        storage_options=azurite.storage_options,
        catalog_url=f"sqlite:///{tmp_path}/catalog.db",
    )
    app = make_app()
    app.dataframe(app.topic(topic)).sink(sink)
    app.run(timeout=3)

    fs = adlfs.AzureBlobFileSystem(connection_string=azurite.connection_string)
    paths = sorted(fs.glob("lake/time-series/events/**/*.parquet"))
    assert [p.split("/")[3:6] for p in paths] == [["year=2024", "month=01", f"day={d:02d}"] for d in range(1, 6)]
    rows = [r for p in paths for r in pq.read_table(io.BytesIO(fs.cat_file(p))).to_pylist()]
    assert sorted(r["n"] for r in rows) == list(range(5))
    assert {r["__key"] for r in rows} == {b"dev-1"}
    assert sorted(sink.catalog.load_table().scan().to_arrow().column("n").to_pylist()) == list(range(5))


def test_missing_container_without_auto_create(azurite):
    sink = TSDataLakeSink(
        s3_prefix="az://nope/x",
        table_name="t",
        storage_options=azurite.storage_options,
        auto_create_bucket=False,
        catalog_url="sqlite:///:memory:",
    )
    with pytest.raises(FileNotFoundError, match="az|abfs"):
        sink.setup()
