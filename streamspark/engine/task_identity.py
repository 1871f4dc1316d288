"""Which Spark task is running this code: the one place that reads Spark's ``TaskContext``.

The engine (transactions, summaries) and the sinks (delivery tokens, file names) ask here for
the streaming query, micro-batch, partition and attempt of the task in progress. Outside a
Spark task (``sdf.test()``, a sink used on its own, the driver) there is none.

>>> current_task() is None  # not inside a Spark task
True
>>> TaskIdentity(query_id="q", batch_id=3, partition=1, attempt=7).streaming
True
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

__all__ = ("TaskIdentity", "current_task", "current_spark_partition")


@dataclass(frozen=True)
class TaskIdentity:
    """A Spark task: its streaming query and micro-batch (None outside a streaming query),
    its partition and its attempt id (unique within the Spark application)."""

    query_id: Optional[str]
    batch_id: Optional[int]
    partition: int
    attempt: int

    @property
    def streaming(self) -> bool:
        """Whether the task belongs to a micro-batch of a streaming query."""
        return self.query_id is not None and self.batch_id is not None


def current_task() -> Optional[TaskIdentity]:
    """The Spark task this code runs in, or None outside one."""
    try:
        from pyspark import TaskContext
    except ImportError:  # pragma: no cover - pyspark is a dependency
        return None
    tc = TaskContext.get()
    if tc is None:
        return None
    batch = tc.getLocalProperty("streaming.sql.batchId")
    return TaskIdentity(
        query_id=tc.getLocalProperty("sql.streaming.queryId") or None,
        batch_id=int(batch) if batch else None,
        partition=tc.partitionId(),
        attempt=tc.taskAttemptId(),
    )


def current_spark_partition() -> int:
    """The partition of the Spark task in progress; 0 outside one (a pipeline run in-process)."""
    task = current_task()
    return task.partition if task is not None else 0
