"""TSDataLakeSink used directly (no Spark): local files, the embedded SQL catalog, schema changes,
idempotent commits, mismatches and unreachable servers, compaction and its CLI."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import duckdb
import pyarrow as pa
import pytest

from streamspark.engine.task_identity import TaskIdentity
from streamspark.sinks.datalake import LakeCatalogError, LakeStorage, TSDataLakeSink, compact
from streamspark.sinks.datalake.storage import CONNECTION_JSON_ENV, options_from_connection_json

DAY_MS = 86_400_000
T0 = 1_704_067_200_000  # 2024-01-01


def _add(sink, rows, key=b"k"):
    for i, r in enumerate(rows):
        sink.add(r, key, 0, None, "topic", 0, i)


def _sink(tmp_path, **kw):
    kw.setdefault("hive_columns", ["year", "month", "day"])
    s = TSDataLakeSink(s3_prefix=str(tmp_path / "lake"), table_name="readings", **kw)
    s.setup()
    return s


def test_standalone_flush_registers_and_reads_back(tmp_path):
    sink = _sink(tmp_path)
    _add(sink, [{"ts_ms": T0 + i * DAY_MS, "temp": 20.5 + i} for i in range(3)])
    sink.flush()
    files = sorted(
        p.relative_to(tmp_path / "lake" / "readings").as_posix() for p in (tmp_path / "lake" / "readings").rglob("*.parquet")
    )
    assert [f.rsplit("/", 1)[0] for f in files] == [
        "year=2024/month=01/day=01",
        "year=2024/month=01/day=02",
        "year=2024/month=01/day=03",
    ]
    got = duckdb.sql(
        f"select temp from read_parquet('{tmp_path}/lake/readings/**/*.parquet', hive_partitioning=true) order by temp"
    ).fetchall()
    assert got == [(20.5,), (21.5,), (22.5,)]
    table = sink.catalog.load_table()
    assert sorted(table.scan().to_arrow().column("temp").to_pylist()) == [20.5, 21.5, 22.5]


def test_schema_evolves_and_ints_fit_a_double_column(tmp_path):
    sink = _sink(tmp_path)
    _add(sink, [{"ts_ms": T0, "temp": 20.5}])
    sink.flush()
    _add(sink, [{"ts_ms": T0, "temp": 21, "unit": "C", "meta": {"fw": 3}}])  # an int, new columns
    sink.flush()
    rows = sorted(sink.catalog.load_table().scan().to_arrow().to_pylist(), key=lambda r: r["temp"])
    assert [(r["temp"], r["unit"], r["meta"]) for r in rows] == [(20.5, None, None), (21.0, "C", {"fw": 3})]
    _add(sink, [{"ts_ms": T0, "temp": "hot"}])
    with pytest.raises(TypeError, match="Column 'temp'"):
        sink.flush()


def test_commit_of_a_recorded_batch_is_skipped(tmp_path):
    sink = _sink(tmp_path, hive_columns=["year"])
    files = sink._write([({"ts_ms": T0, "v": 1}, b"k", 0)], TaskIdentity("query-1", 7, 0, 0))
    urls = [sink.storage.url(f["path"]) for f in files]
    schemas = [f["schema"] for f in files]
    assert sink.catalog.commit_files(urls, schemas, "query-1", 7) is True
    assert sink.catalog.commit_files(urls, schemas, "query-1", 7) is False  # the replay
    table = sink.catalog.load_table()
    assert len(table.metadata.snapshots) == 1 and table.scan().to_arrow().num_rows == 1
    # the replayed task finds its file and keeps it (same deterministic name)
    before = os.path.getmtime(files[0]["path"] if False else sink.storage.path(files[0]["path"]))
    again = sink._write([({"ts_ms": T0, "v": 1}, b"k", 0)], TaskIdentity("query-1", 7, 0, 0))
    assert again[0]["path"] == files[0]["path"]
    assert os.path.getmtime(sink.storage.path(files[0]["path"])) == before
    # a later batch of the same query commits
    more = sink._write([({"ts_ms": T0, "v": 2}, b"k", 0)], TaskIdentity("query-1", 8, 0, 0))
    assert (
        sink.catalog.commit_files([sink.storage.url(f["path"]) for f in more], [f["schema"] for f in more], "query-1", 8) is True
    )
    assert sink.catalog.load_table().scan().to_arrow().num_rows == 2


def test_partition_mismatch_with_the_table_is_refused(tmp_path):
    sink = _sink(tmp_path, hive_columns=["year"])
    _add(sink, [{"ts_ms": T0}])
    sink.flush()
    other = TSDataLakeSink(s3_prefix=str(tmp_path / "lake"), table_name="readings", hive_columns=["year", "month"])
    with pytest.raises(LakeCatalogError, match=r"partitioned by \['year'\].*hive_columns=\['year', 'month'\]"):
        other.setup()


def test_layout_mismatch_on_storage_is_refused(tmp_path):
    (tmp_path / "lake" / "readings" / "site=north").mkdir(parents=True)
    sink = TSDataLakeSink(s3_prefix=str(tmp_path / "lake"), table_name="readings", hive_columns=["year"])
    with pytest.raises(ValueError, match=r"partitioned by \['site'\]"):
        sink.setup()


def test_auto_discover_off_needs_the_table(tmp_path):
    sink = _sink(tmp_path, auto_discover=False)
    _add(sink, [{"ts_ms": T0}])
    with pytest.raises(LakeCatalogError, match="does not exist and auto_discover=False"):
        sink.flush()


def test_unreachable_rest_catalog_is_a_clear_error(tmp_path):
    sink = TSDataLakeSink(s3_prefix=str(tmp_path / "lake"), table_name="t", catalog_url="http://127.0.0.1:9")
    started = time.monotonic()
    with pytest.raises(LakeCatalogError, match="Cannot reach the rest catalog http://127.0.0.1:9"):
        sink.setup()
    assert time.monotonic() - started < 60


def test_unreachable_object_storage_is_a_clear_error():
    sink = TSDataLakeSink(
        s3_prefix="s3://lake/ts",
        table_name="t",
        storage_options={
            "key": "k",
            "secret": "s",
            "client_kwargs": {"endpoint_url": "http://127.0.0.1:9"},
            "config_kwargs": {"retries": {"max_attempts": 1}, "connect_timeout": 2},
        },
    )
    with pytest.raises(ConnectionError, match="Cannot reach s3://lake"):
        sink.setup()


def test_compaction_merges_closed_partitions_atomically(tmp_path):
    sink = _sink(tmp_path)
    for i in range(4):  # four flushes -> four small files per day
        _add(sink, [{"ts_ms": T0 + d * DAY_MS + i, "i": i, "d": d} for d in range(2)])
        sink.flush()
    root = tmp_path / "lake" / "readings"
    assert len(list(root.rglob("*.parquet"))) == 8
    # a partition still open (its day ends in the future relative to now_ms) is left alone
    result = compact(sink.catalog, min_age_ms=0, now_ms=T0 + DAY_MS + 1)
    assert result == {"partitions": 1, "files_removed": 4, "files_written": 1, "rows": 4}
    result = sink.compact(min_age_ms=0)
    assert result["partitions"] == 1
    parquet = sorted(p.name for p in root.rglob("*.parquet"))
    assert len(parquet) == 2 and all(p.startswith("compact-") for p in parquet)
    table = sink.catalog.load_table()
    rows = table.scan().to_arrow().to_pylist()
    assert sorted((r["d"], r["i"]) for r in rows) == [(d, i) for d in range(2) for i in range(4)]
    dup = duckdb.sql(f"select count(*) from read_parquet('{root}/**/*.parquet', hive_partitioning=true)").fetchall()
    assert dup == [(8,)]
    assert table.metadata.snapshots[-1].summary.operation.value == "overwrite"


def test_compaction_cli(tmp_path):
    sink = _sink(tmp_path, hive_columns=["year"])
    for i in range(3):
        _add(sink, [{"ts_ms": T0, "i": i}])
        sink.flush()
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "streamspark.sinks.datalake",
            "compact",
            "--prefix",
            str(tmp_path / "lake"),
            "--table",
            "readings",
            "--hive-columns",
            "year",
            "--min-age-ms",
            "0",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout.strip().splitlines()[-1]) == {"partitions": 1, "files_removed": 3, "files_written": 1, "rows": 3}


def test_connection_json_environment_variable(tmp_path, monkeypatch):
    monkeypatch.setenv(CONNECTION_JSON_ENV, json.dumps({"provider": "local", "path": str(tmp_path / "root")}))
    storage = LakeStorage("data-lake/ts")
    assert storage.kind == "local" and storage.root == str(tmp_path / "root" / "data-lake" / "ts")
    base, options = options_from_connection_json(
        json.dumps({"Provider": "S3", "BucketName": "b", "AccessKeyId": "id", "SecretAccessKey": "sec", "Region": "eu-west-1"})
    )
    assert base == "s3://b" and options == {"key": "id", "secret": "sec", "client_kwargs": {"region_name": "eu-west-1"}}
    base, options = options_from_connection_json('{"provider": "azure", "container": "c", "connection_string": "X"}')
    assert base == "az://c" and options == {"connection_string": "X"}
    with pytest.raises(ValueError, match="unknown provider"):
        options_from_connection_json('{"provider": "ftp"}')
    assert "secret" not in repr(LakeStorage("s3://b/p", {"secret": "secret"}))


def test_workspace_id_goes_between_bucket_and_prefix():
    assert TSDataLakeSink("s3://bucket/data-lake", "t", workspace_id="ws1").storage.root == "bucket/ws1/data-lake"
    _ = pa  # keep the import used by type checkers


def test_driver_silence_clock_steps_through_batch_gaps(tmp_path):
    """On Spark the tracker's clock moves with micro-batches; a gap much longer than the threshold
    still fires a silent key (it must not pass the 3x TTL unseen), and a key that keeps sending
    in every batch never fires, however long a batch takes."""
    fired = []
    sink = TSDataLakeSink(
        s3_prefix=str(tmp_path / "lake"), table_name="t", stream_timeout_ms=1_000, on_stream_timeout=fired.append
    )
    sink.on_query_start(None)
    try:
        t0 = 1_800_000_000_000
        sink.receive_from_worker({"files": [], "seen": {b"a", b"b"}, "query_id": "q"})
        sink.on_batch_commit(0, t0)
        sink.receive_from_worker({"files": [], "seen": {b"b"}, "query_id": "q"})
        sink.on_batch_commit(1, t0 + 10_000)  # a batch 10 thresholds later
        assert fired == [b"a"]
        sink.receive_from_worker({"files": [], "seen": {b"b"}, "query_id": "q"})
        sink.on_batch_commit(2, t0 + 60_000)
        assert fired == [b"a"]
        sink.on_source_idle(t0 + 61_500)  # the source is idle: b has been silent for 1.5 s
        assert fired == [b"a", b"b"]
    finally:
        sink.on_query_stop()


def test_standalone_setup_starts_the_silence_thread(tmp_path):
    """Used directly (as in the reference), setup() starts the check thread: a key fires without any flush."""
    import threading

    fired = threading.Event()
    sink = TSDataLakeSink(
        s3_prefix=str(tmp_path / "lake"), table_name="t", stream_timeout_ms=300, on_stream_timeout=lambda k: fired.set()
    )
    sink.setup()
    try:
        assert sink._timeout.running
        _add(sink, [{"ts_ms": T0}], key=b"quiet")
        sink.flush()
        assert fired.wait(5)
    finally:
        sink.cleanup()
    assert not sink._timeout.running
