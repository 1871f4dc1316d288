"""IcebergSink on pyiceberg catalogs: SQL (SQLite + local warehouse) and REST (SeaweedFS)."""

from __future__ import annotations

import pytest
from pyiceberg.catalog import load_catalog

from streamspark.sinks.community.iceberg import AWSIcebergConfig, IcebergCatalogConfig, IcebergSink

from .conftest import feed, make_batch


def sql_config(tmp_path):
    return IcebergCatalogConfig(
        name="t", properties={"type": "sql", "uri": f"sqlite:///{tmp_path}/cat.db", "warehouse": f"file://{tmp_path}/wh"}
    )


def test_iceberg_creates_partitioned_table_and_evolves_schema(tmp_path):
    config = sql_config(tmp_path)
    sink = IcebergSink(table_name="ns.events", config=config, data_catalog_spec="pyiceberg")
    sink.start()
    feed(sink, make_batch({"n": 1, "name": "a"}, {"n": 2, "name": "b"}))
    sink.flush()
    feed(sink, make_batch({"n": 3, "extra": 0.5}, "not a dict", start=2))
    sink.flush()
    table = load_catalog("t", **config.properties).load_table("ns.events")
    assert [f.name for f in table.schema().fields] == ["_timestamp", "_key", "n", "name", "extra", "_value"]
    assert str(table.spec().fields[0].transform) == "day"
    rows = sorted(table.scan().to_arrow().to_pylist(), key=lambda r: r["_key"] + str(r["n"]))
    assert [(r["_key"], r["n"], r["name"], r["extra"], r["_value"]) for r in rows] == [
        ("k0", 1, "a", None, None),
        ("k0", 3, None, 0.5, None),
        ("k1", 2, "b", None, None),
        ("k1", None, None, None, "not a dict"),
    ]
    assert rows[0]["_timestamp"].isoformat() == "2023-11-14T22:13:20+00:00"
    assert len(table.metadata.snapshots) == 2  # one snapshot per flush


def test_iceberg_type_conflict_is_a_clear_error(tmp_path):
    sink = IcebergSink(table_name="ns.typed", config=sql_config(tmp_path), data_catalog_spec="pyiceberg")
    sink.start()
    feed(sink, make_batch({"n": 1}))
    sink.flush()
    feed(sink, make_batch({"n": "x"}))
    with pytest.raises(TypeError, match="Column 'n' has type string in this batch but int64 in the table"):
        sink.flush()


def test_iceberg_config_validation():
    glue = AWSIcebergConfig(aws_s3_uri="s3://b/wh", aws_region="eu-west-1", aws_access_key_id="a", aws_secret_access_key="s")
    assert glue.properties["type"] == "glue" and glue.properties["glue.region"] == "eu-west-1"
    with pytest.raises(ValueError, match="data_catalog_spec='aws_glue'"):
        IcebergSink(table_name="ns.t", config=glue, data_catalog_spec="rest")
    with pytest.raises(ValueError, match="namespace.table"):
        IcebergSink(table_name="t", config=glue)


def test_iceberg_rest_catalog_on_seaweedfs(tmp_path):
    from tests.servers import SeaweedFS

    with SeaweedFS() as weed:
        props = {
            "type": "rest",
            "uri": weed.catalog_url,
            **weed.catalog_properties,
            "s3.endpoint": weed.endpoint,
            "s3.access-key-id": weed.access_key,
            "s3.secret-access-key": weed.secret_key,
            "s3.region": "us-east-1",
        }
        config = IcebergCatalogConfig(name="rest", properties=props)
        sink = IcebergSink(table_name="ns.rest_events", config=config, data_catalog_spec="pyiceberg")
        sink.start()
        feed(sink, make_batch({"n": 1}, {"n": 2}))
        sink.flush()
        table = load_catalog("rest", **props).load_table("ns.rest_events")
        assert sorted(table.scan().to_arrow().column("n").to_pylist()) == [1, 2]


def test_iceberg_aws_glue_config_on_moto_and_seaweedfs(moto, monkeypatch):
    """AWS Glue + S3 configured as the reference does (AWSIcebergConfig), against moto's Glue (an
    AWS emulator) and SeaweedFS's S3 (moto's S3 fails pyarrow's multipart uploads)."""
    from tests.servers import SeaweedFS

    with SeaweedFS() as weed:
        monkeypatch.setenv("AWS_ENDPOINT_URL_GLUE", moto.url)
        monkeypatch.setenv("AWS_ENDPOINT_URL_S3", weed.endpoint)
        config = AWSIcebergConfig(
            aws_s3_uri=f"s3://{weed.bucket}/warehouse",
            aws_region="us-east-1",
            aws_access_key_id=weed.access_key,
            aws_secret_access_key=weed.secret_key,
        )
        sink = IcebergSink(table_name="glue_db.events", config=config)
        sink.start()
        feed(sink, make_batch({"n": 1}, {"n": 2}))
        sink.flush()
        table = config.load_catalog().load_table("glue_db.events")
        assert table.location().startswith(f"s3://{weed.bucket}/warehouse")
        assert sorted(table.scan().to_arrow().column("n").to_pylist()) == [1, 2]
