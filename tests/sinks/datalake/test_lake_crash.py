"""Exactly-once files: kill -9 the whole application around the catalog commit; after restarts
the lake holds every record exactly once, through DuckDB and through the catalog."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from streamspark.sinks.datalake import TSDataLakeSink

APP = Path(__file__).with_name("lake_crash_app.py")
T0 = 1_704_067_200_000


def _run(broker, src, lake, state, group, log, crash_at):
    env = {**os.environ, "CRASH_AT": crash_at}
    proc = subprocess.run(
        [sys.executable, str(APP), broker.address, src, lake, state, group],
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
        env=env,
        timeout=300,
        cwd=str(Path(__file__).parents[3]),
    )
    return proc.returncode


@pytest.mark.harness(seconds=130)
def test_kill_9_before_and_after_the_catalog_commit(broker, kafka, tmp_path):
    src = kafka.new_topic(partitions=2)
    total = 400
    kafka.produce(
        src, [{"value": json.dumps({"i": i, "ts": T0 + i * 3_600_000 * 24}).encode(), "partition": i % 2} for i in range(total)]
    )
    lake, state, group = str(tmp_path / "lake"), str(tmp_path / "state"), "lake-crash"
    log_path = tmp_path / "app.log"
    with open(log_path, "ab") as log:
        assert _run(broker, src, lake, state, group, log, "after_commit:1") == -9
        assert _run(broker, src, lake, state, group, log, "before_commit:3") == -9
        assert _run(broker, src, lake, state, group, log, "") == 0
    text = log_path.read_text(errors="replace")
    assert "KILL after commit of batch 1" in text and "KILL before commit of batch 3" in text
    assert "already in default.events: skipping its commit" in text  # the replay of batch 1
    assert "exists (a replay of batch" in text  # the replayed tasks kept their files

    ids = [
        r[0] for r in duckdb.sql(f"select i from read_parquet('{lake}/events/**/*.parquet', hive_partitioning=true)").fetchall()
    ]
    assert sorted(ids) == list(range(total))
    table = TSDataLakeSink(s3_prefix=lake, table_name="events", hive_columns=["year", "month"]).catalog.load_table()
    assert sorted(table.scan().to_arrow().column("i").to_pylist()) == list(range(total))
    batches = [s.summary.additional_properties["streamspark.batch-id"] for s in table.metadata.snapshots]
    assert len(batches) == len(set(batches))
