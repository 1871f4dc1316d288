"""Helpers of the tests that drive the lake sink's task code (``TaskProcessor``) in this process,
without Spark: ``test_raw_json_sink.py`` and ``test_raw_avro_sink.py``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from streamspark import Application
from streamspark.engine.processor import TaskProcessor
from streamspark.engine.strategies import Strategies
from streamspark.sinks.datalake import TSDataLakeSink


def lake_sink(root: Path) -> TSDataLakeSink:
    """A lake sink under ``root``, table ``t``, hour partitions from the ``ts`` field."""
    return TSDataLakeSink(
        s3_prefix=str(root), table_name="t", hive_columns=["year", "month", "day", "hour"], timestamp_column="ts"
    )


def task_processor(app: Application, collect: bool = False, plain: tuple[str, ...] = ()) -> TaskProcessor:
    """The task code for the app's plan, with the fast paths a run of it takes (but ``plain``)."""
    plan = app._plan(collect=collect, metadata=False)
    plan.strategies = Strategies(plain=plain).names_for(plan)
    return TaskProcessor(plan, 0)


def partition_files(root: Path) -> dict[str, list[Any]]:
    """Each partition directory's rows (files in name order) and column types."""
    out: dict[str, list[Any]] = {}
    for path in sorted((root / "t").rglob("*.parquet")):
        table = pq.read_table(path, partitioning=None)
        out.setdefault(str(path.parent.relative_to(root)), []).append((table.schema, table.to_pylist()))
    return out
