"""Start Spark's Python processes while a local session starts, not in its first query.

Spark starts one Python daemon per kind of Python work the first time it needs it, one after
another: the data source daemon (a source's schema), the planning daemon (its reader) and the
task daemon (``read()``, ``mapInArrow``...). Each imports PySpark, forks a worker, which
imports its own modules and ours. In the first streaming query of a process that chain took
~3 s before its first task started (measured on 2 cores: first task 4.0 s after the query
started, 1.0 s in the next query).

A new local session therefore runs one tiny batch read of :class:`WarmupSource` in a
background thread: it starts the three daemons, forks one task worker per core, and imports
the modules tasks use into them (Spark reuses idle workers for a minute; the daemons stay
for the session). The query that follows finds them ready. ``STREAMSPARK_WARMUP=0`` turns
it off.

>>> from streamspark.engine.session import get_spark, wait_warmup
>>> spark = get_spark()      # doctest: +SKIP
>>> wait_warmup(timeout=30)  # doctest: +SKIP
True
"""

from __future__ import annotations

import logging
import os
import threading
import time
from typing import Any, Iterator, Mapping, Optional

from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition

from ._env import switched_on

__all__ = ("WARMUP_SOURCE", "WarmupSource", "warmup_enabled", "start_warmup")

logger = logging.getLogger(__name__)

WARMUP_SOURCE = "streamspark_warmup"


class WarmupSource(DataSource):
    """A batch source of one row per task (option ``tasks``), each read by a task that imports
    the engine's task modules first."""

    @classmethod
    def name(cls) -> str:
        return WARMUP_SOURCE

    def schema(self) -> str:
        return "task int, pid int"

    def reader(self, schema: Any) -> "DataSourceReader":
        return _WarmupReader(int(self.options.get("tasks", "1")))


class _WarmupReader(DataSourceReader):
    def __init__(self, tasks: int) -> None:
        self.tasks = max(1, tasks)

    def partitions(self) -> list[InputPartition]:
        return [InputPartition(i) for i in range(self.tasks)]

    def read(self, partition: InputPartition) -> Iterator[tuple[int, int]]:
        # what a task of a streaming query imports (the source, the task code, the state
        # store): loaded once here, in a worker Spark keeps for the next tasks
        from . import _kafka_source, task_entry  # noqa: F401
        from ..state import store  # noqa: F401

        yield (int(partition.value), os.getpid())


def warmup_enabled(master: str, environ: Optional[Mapping[str, str]] = None) -> bool:
    """Whether a new session on ``master`` warms its Python processes up: on local masters
    (their workers run on this machine, for this session only), unless ``STREAMSPARK_WARMUP=0``.

    >>> warmup_enabled("local[2]", {})
    True
    >>> warmup_enabled("local[*]", {"STREAMSPARK_WARMUP": "0"})
    False
    >>> warmup_enabled("spark://cluster:7077", {})
    False
    """
    return master.startswith("local") and switched_on("STREAMSPARK_WARMUP", environ)


def start_warmup(spark: Any, tasks: int) -> threading.Thread:
    """Run the warm-up read with ``tasks`` tasks in a background (daemon) thread; returns it.

    A failure is logged, never raised: the first query then starts the processes itself.
    """

    def run() -> None:
        started = time.monotonic()
        try:
            rows = spark.read.format(WARMUP_SOURCE).option("tasks", str(tasks)).load().collect()
            logger.debug(
                "Spark's Python workers started in %.1fs (pids %s)", time.monotonic() - started, sorted({r["pid"] for r in rows})
            )
        except Exception as exc:  # e.g. the session was stopped meanwhile
            logger.debug("Warming Spark's Python workers up failed: %s", exc)

    thread = threading.Thread(target=run, name="streamspark-warmup", daemon=True)
    thread.start()
    return thread
