"""S3FileSource against a real S3 server (SeaweedFS on 127.0.0.1): a Spark pipeline reading an
export, partition folders, Parquet, prefixes, and bad input (missing bucket, broken object,
unreachable endpoint)."""

from __future__ import annotations

import gzip
import io
import json
import time
import uuid

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from streamspark.sources import SourceInputError
from streamspark.sources.community.file import MissingS3Bucket
from streamspark.sources.community.file.s3 import S3FileSource
from streamspark.testing.broker import free_port
from tests.servers import SeaweedFS

from ...conftest import run_in_process
from .test_local import jsonl, record


@pytest.fixture(scope="module")
def seaweed():
    with SeaweedFS() as server:
        yield server


@pytest.fixture(scope="module")
def s3(seaweed):
    import botocore.session

    client = botocore.session.get_session().create_client(
        "s3",
        region_name="us-east-1",
        endpoint_url=seaweed.endpoint,
        aws_access_key_id=seaweed.access_key,
        aws_secret_access_key=seaweed.secret_key,
    )
    yield client
    client.close()


def put(s3, bucket, objects):
    for key, data in objects.items():
        s3.put_object(Bucket=bucket, Key=key, Body=data)


def source(seaweed, filepath, **kwargs):
    kwargs.setdefault("replay_speed", 0)
    return S3FileSource(
        filepath,
        bucket=kwargs.pop("bucket", seaweed.bucket),
        region_name="us-east-1",
        aws_access_key_id=seaweed.access_key,
        aws_secret_access_key=seaweed.secret_key,
        endpoint_url=kwargs.pop("endpoint_url", seaweed.endpoint),
        **kwargs,
    )


def prefix() -> str:
    return f"exports-{uuid.uuid4().hex[:8]}"


def test_spark_pipeline_reads_the_records_of_an_s3_export(make_app, kafka, seaweed, s3):
    root, now = prefix(), int(time.time() * 1000)  # recent timestamps: the broker's retention keeps them
    put(
        s3,
        seaweed.bucket,
        {
            f"{root}/readings/0/0000000000000000000.jsonl": jsonl(record("a", {"n": 1}, now), record("b", {"n": 2}, now + 1)),
            f"{root}/readings/0/0000000000000000002.jsonl": jsonl(record("a", {"n": 3}, now + 2)),
        },
    )
    out = kafka.new_topic()
    app = make_app()
    sdf = app.dataframe(source=source(seaweed, f"{root}/readings", name=f"s3-{out}"))
    sdf["n10"] = sdf["n"] * 10
    sdf.to_topic(app.topic(out))
    app.run(count=3, timeout=60)
    got = [(m.key(), json.loads(m.value()), m.timestamp()[1]) for m in kafka.consume(out, expected=3)]
    assert sorted(got, key=lambda m: m[2]) == [
        (b"a", {"n": 1, "n10": 10}, now),
        (b"b", {"n": 2, "n10": 20}, now + 1),
        (b"a", {"n": 3, "n10": 30}, now + 2),
    ]


# --- in process (no broker) ---------------------------------------------------------------------------


def test_objects_under_the_prefix_in_key_order_with_partition_folders(seaweed, s3):
    root = prefix()
    put(
        s3,
        seaweed.bucket,
        {
            f"{root}/t/1/0000000000000000000.jsonl.gz": gzip.compress(jsonl(record("b", 2, 2))),
            f"{root}/t/0/0000000000000000000.jsonl.gz": gzip.compress(jsonl(record("a", 0, 0))),
            f"{root}/t/0/0000000000000000001.jsonl.gz": gzip.compress(jsonl(record("a", 1, 1))),
            f"{root}/t2/0/0000000000000000000.jsonl.gz": gzip.compress(jsonl(record("x", 9, 9))),  # a sibling prefix
        },
    )
    src = source(seaweed, f"{root}/t", compression="gzip", has_partition_folders=True)
    assert src.name == f"s3_{seaweed.bucket}_t"
    assert src.default_topic().create_config.num_partitions == 2
    assert [(m["key"], json.loads(m["value"])) for m in run_in_process(src)] == [("a", 0), ("a", 1), ("b", 2)]
    # one object's key reads that object only
    one = source(seaweed, f"/{root}/t/1/0000000000000000000.jsonl.gz", compression="gzip")
    assert [json.loads(m["value"]) for m in run_in_process(one)] == [2]


def test_parquet_objects_in_the_file_sink_layout(seaweed, s3):
    root = prefix()
    buf = io.BytesIO()
    pq.write_table(pa.table({"_timestamp": [10, 20], "_key": ["s1", "s2"], "temp": [20.5, 21.5]}), buf)
    put(s3, seaweed.bucket, {f"{root}/readings.parquet": buf.getvalue()})
    src = source(seaweed, root, file_format="parquet")
    assert [(m["key"], json.loads(m["value"]), m["timestamp"]) for m in run_in_process(src)] == [
        ("s1", {"temp": 20.5}, 10),
        ("s2", {"temp": 21.5}, 20),
    ]


def test_a_missing_bucket_names_the_source_and_the_bucket(seaweed):
    with pytest.raises(MissingS3Bucket) as info:
        run_in_process(source(seaweed, "x", bucket="no-such-bucket", name="lake"))
    assert str(info.value) == 'Source "lake" cannot read the S3 bucket "no-such-bucket": it does not exist'
    with pytest.raises(MissingS3Bucket):  # the partition count needs the bucket too
        source(seaweed, "x", bucket="no-such-bucket", has_partition_folders=True).default_topic()


def test_a_broken_parquet_object_names_the_object(seaweed, s3):
    root = prefix()
    put(s3, seaweed.bucket, {f"{root}/bad.parquet": b"PAR1 but not really"})
    with pytest.raises(SourceInputError) as info:
        run_in_process(source(seaweed, root, file_format="parquet", name="lake"))
    assert str(info.value).startswith(
        f'Source "lake" cannot read the file "s3://{seaweed.bucket}/{root}/bad.parquet": not a valid Parquet file'
    )


def test_an_unreachable_endpoint_names_the_source_and_the_bucket(seaweed):
    src = source(seaweed, "x", endpoint_url=f"http://127.0.0.1:{free_port()}", name="lake")
    with pytest.raises(
        SourceInputError,
        match=f'Source "lake" cannot read the S3 bucket "{seaweed.bucket}": Could not connect to the endpoint URL',
    ):
        run_in_process(src)
