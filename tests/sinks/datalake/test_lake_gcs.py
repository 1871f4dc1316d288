"""The lake on the Google Cloud Storage API — an emulator (``gcp-storage-emulator``), since no
real GCS server installs here — registered in a SQL catalog and read back."""

from __future__ import annotations

import io

import pyarrow.parquet as pq
import pytest

from streamspark.sinks.datalake import TSDataLakeSink
from tests.servers.gcs import GcsEmulator

T0 = 1_704_067_200_000


@pytest.fixture(scope="module")
def gcs():
    with GcsEmulator() as server:
        yield server


def test_lake_on_gcs_emulator(gcs, tmp_path):
    import gcsfs

    sink = TSDataLakeSink(
        s3_prefix="gs://lake/time-series",
        table_name="events",
        hive_columns=["year", "month"],
        storage_options=gcs.storage_options,
        catalog_url=f"sqlite:///{tmp_path}/catalog.db",
    )
    sink.setup()
    for i in range(3):
        sink.add({"ts_ms": T0 + i * 40 * 86_400_000, "n": i}, b"dev", 0, None, "t", 0, i)
    sink.flush()
    fs = gcsfs.GCSFileSystem(**gcs.storage_options)
    paths = sorted(fs.glob("lake/time-series/events/**/*.parquet"))
    assert [p.split("/")[3:5] for p in paths] == [["year=2024", "month=01"], ["year=2024", "month=02"], ["year=2024", "month=03"]]
    rows = [r for p in paths for r in pq.read_table(io.BytesIO(fs.cat_file(p))).to_pylist()]
    assert sorted(r["n"] for r in rows) == [0, 1, 2]
    assert sorted(sink.catalog.load_table().scan().to_arrow().column("n").to_pylist()) == [0, 1, 2]
