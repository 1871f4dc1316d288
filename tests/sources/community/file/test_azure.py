"""AzureFileSource against a real Azure Blob endpoint (Azurite on 127.0.0.1): a Spark pipeline
reading an export, partition folders, prefixes, and bad input (missing container, broken
object, unreachable endpoint)."""

from __future__ import annotations

import gzip
import json
import time
import uuid

import pytest

from streamspark.sources import SourceInputError
from streamspark.sources.community.file.azure import AzureFileSource, MissingAzureContainer
from streamspark.testing.broker import free_port
from tests.servers import Azurite
from tests.servers.azurite import ACCOUNT, KEY

from ...conftest import run_in_process
from .test_local import jsonl, record


@pytest.fixture(scope="module")
def azurite():
    with Azurite() as server:
        yield server


def container(azurite, blobs):
    """A new container holding ``blobs`` ({name: bytes}); returns its name."""
    from azure.storage.blob import ContainerClient

    name = f"c{uuid.uuid4().hex[:10]}"
    with ContainerClient.from_connection_string(azurite.connection_string, name) as client:
        client.create_container()
        for blob, data in blobs.items():
            client.upload_blob(blob, data)
    return name


def test_spark_pipeline_reads_the_records_of_an_azure_export(make_app, kafka, azurite):
    now = int(time.time() * 1000)  # recent timestamps: the broker's retention keeps them
    name = container(
        azurite,
        {
            "exports/readings/0/0000000000000000000.jsonl": jsonl(
                record("a", {"n": 1}, now), record("b", {"n": 2}, now + 1), record("a", {"n": 3}, now + 2)
            )
        },
    )
    out = kafka.new_topic()
    app = make_app()
    sdf = app.dataframe(
        source=AzureFileSource(azurite.connection_string, name, "exports/readings", replay_speed=0, name=f"azure-{out}")
    )
    sdf = sdf.filter(lambda v: v["n"] != 2)
    sdf.to_topic(app.topic(out))
    app.run(count=3, timeout=60)
    got = [(m.key(), json.loads(m.value()), m.timestamp()[1]) for m in kafka.consume(out, expected=2)]
    assert sorted(got, key=lambda m: m[2]) == [(b"a", {"n": 1}, now), (b"a", {"n": 3}, now + 2)]


# --- in process (no broker) ---------------------------------------------------------------------------


def test_blobs_under_the_prefix_in_name_order_with_partition_folders(azurite):
    name = container(
        azurite,
        {
            "t/1/0000000000000000000.jsonl.gz": gzip.compress(jsonl(record("b", 2, 2))),
            "t/0/0000000000000000001.jsonl.gz": gzip.compress(jsonl(record("a", 1, 1))),
            "t/0/0000000000000000000.jsonl.gz": gzip.compress(jsonl(record("a", 0, 0))),
            "t2/0/0000000000000000000.jsonl.gz": gzip.compress(jsonl(record("x", 9, 9))),  # a sibling prefix
        },
    )
    src = AzureFileSource(azurite.connection_string, name, "t", compression="gzip", has_partition_folders=True, replay_speed=0)
    assert src.name == f"azurefilestore_{name}_t"
    assert src.default_topic().create_config.num_partitions == 2
    assert [(m["key"], json.loads(m["value"])) for m in run_in_process(src)] == [("a", 0), ("a", 1), ("b", 2)]
    one = AzureFileSource(azurite.connection_string, name, "t/1/0000000000000000000.jsonl.gz", compression="gzip")
    assert [json.loads(m["value"]) for m in run_in_process(one)] == [2]


def test_a_missing_container_names_the_source_and_the_container(azurite):
    with pytest.raises(MissingAzureContainer) as info:
        run_in_process(AzureFileSource(azurite.connection_string, "missing", "x", name="blobs"))
    assert str(info.value) == 'Source "blobs" cannot read the Azure container "missing": it does not exist'


def test_a_broken_parquet_blob_names_the_blob(azurite):
    name = container(azurite, {"x/bad.parquet": b"PAR1 but not really"})
    with pytest.raises(SourceInputError) as info:
        run_in_process(AzureFileSource(azurite.connection_string, name, "x", file_format="parquet", name="blobs"))
    assert str(info.value).startswith(f'Source "blobs" cannot read the file "{name}/x/bad.parquet": not a valid Parquet file')


def test_an_unreachable_endpoint_names_the_source_and_the_container():
    down = (
        f"DefaultEndpointsProtocol=http;AccountName={ACCOUNT};AccountKey={KEY};"
        f"BlobEndpoint=http://127.0.0.1:{free_port()}/{ACCOUNT};"
    )
    with pytest.raises(SourceInputError, match='Source "blobs" cannot read the Azure container "data": .*refused'):
        run_in_process(AzureFileSource(down, "data", "x", name="blobs"))
