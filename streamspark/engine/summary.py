"""What a Spark task reports to the driver: :class:`TaskSummary`, and where an error stopped it.

Every task body ends with one summary (a row of :data:`SUMMARY_SCHEMA`); the driver reads the
rows of a micro-batch back with :meth:`TaskSummary.from_row`, raises the first error, and
otherwise counts, collects and hands sink payloads over.

>>> s = TaskSummary(spark_partition=1, input_count=3, output_count=2, skipped=1)
>>> TaskSummary.from_row(s.as_row()) == s
True
>>> Stage("sink") is Stage.SINK
True
"""

from __future__ import annotations

import dataclasses
import enum
import pickle
import traceback
from typing import Any, Optional

import pyarrow as pa

from ._arrow import ddl

__all__ = ("Stage", "ProducerFlush", "TaskError", "TaskSummary", "SUMMARY_ARROW", "SUMMARY_SCHEMA")


class Stage(str, enum.Enum):
    """Where in a task a record failed; the value is the word used in error messages."""

    SETUP = "setup"
    CONSUMER = "consumer"
    PROCESSING = "processing"
    GROUP_BY = "group_by"
    PRODUCER = "producer"
    SINK = "sink"
    STATE = "state"

    def __str__(self) -> str:
        return self.value


class ProducerFlush(enum.IntEnum):
    """Who waited for the deliveries of what a task (or a state bucket) produced."""

    #: the task itself, before reporting (or it produced nothing)
    OWN = 0
    #: the end bucket of its Spark partition, which runs last in the same worker (the
    #: ``one-flush-per-partition`` strategy); the batch is only complete with that report
    DEFERRED = 1
    #: this report is an end bucket's: every delivery of its Spark partition was confirmed
    PARTITION_END = 2


@dataclasses.dataclass(frozen=True)
class TaskError:
    """The error that stopped a task, with the record it stopped at (when there is one)."""

    stage: Stage
    topic: Optional[str]
    partition: Optional[int]
    offset: Optional[int]
    type: str
    message: str
    traceback: str
    #: the pickled exception, when the driver can rebuild it (None otherwise)
    exception: Optional[bytes] = None

    @classmethod
    def of(
        cls, exc: BaseException, stage: Stage, topic: Optional[str], partition: Optional[int], offset: Optional[int]
    ) -> "TaskError":
        """Describe ``exc``; the exception itself travels along only if it survives pickling
        (with cloudpickle: an exception class of the program's own script, which reached the
        worker by value, comes back to the driver as that very class)."""
        from pyspark import cloudpickle

        pickled: Optional[bytes]
        try:
            pickled = cloudpickle.dumps(exc)
            pickle.loads(pickled)  # only ship what the driver can rebuild
        except Exception:
            pickled = None
        return cls(
            Stage(stage),
            topic,
            partition,
            offset,
            type(exc).__name__,
            str(exc),
            "".join(traceback.format_exception(type(exc), exc, exc.__traceback__)),
            pickled,
        )

    def cause(self) -> Optional[BaseException]:
        """The original exception, rebuilt (None if it could not travel)."""
        return pickle.loads(self.exception) if self.exception else None

    def describe(self) -> str:
        """``'<stage> failed at topic="t" partition=0 offset=5: KeyError: 'x''``."""
        where = ""
        if self.topic is not None:
            where = f' at topic="{self.topic}" partition={self.partition}'
            if self.offset is not None:  # None: a delivery failure, which names no input offset
                where += f" offset={self.offset}"
        return f"{self.stage.value} failed{where}: {self.type}: {self.message}"


SUMMARY_ARROW = pa.schema(
    [
        ("spark_partition", pa.int32()),
        ("input_count", pa.int64()),
        ("output_count", pa.int64()),
        ("skipped", pa.int64()),
        ("collected", pa.binary()),
        ("sink_payloads", pa.binary()),
        ("error", pa.binary()),
        ("producer_flush", pa.int32()),
    ]
)
#: the summary row's schema as Spark DDL
SUMMARY_SCHEMA = ddl(SUMMARY_ARROW)


@dataclasses.dataclass
class TaskSummary:
    """One task's report: counts, what it collected for ``app.run()``, what driver-side sinks
    gathered, and the error that stopped it (if any)."""

    spark_partition: int = 0
    input_count: int = 0
    output_count: int = 0
    skipped: int = 0
    #: the outputs collected for ``app.run()``'s return value (a list), when collecting
    collected: Optional[list[Any]] = None
    #: per sink node id: what the sink hands over to its driver side
    sink_payloads: Optional[dict[int, Any]] = None
    error: Optional[TaskError] = None
    producer_flush: ProducerFlush = ProducerFlush.OWN

    def as_row(self) -> dict[str, Any]:
        """The summary as a row of :data:`SUMMARY_SCHEMA` (objects pickled into binary columns)."""
        return {
            "spark_partition": self.spark_partition,
            "input_count": self.input_count,
            "output_count": self.output_count,
            "skipped": self.skipped,
            "collected": pickle.dumps(self.collected) if self.collected else None,
            "sink_payloads": pickle.dumps(self.sink_payloads) if self.sink_payloads else None,
            "error": pickle.dumps(self.error) if self.error is not None else None,
            "producer_flush": int(self.producer_flush),
        }

    def as_batch(self) -> pa.RecordBatch:
        """The summary as a one-row Arrow batch of :data:`SUMMARY_ARROW`."""
        return pa.RecordBatch.from_pydict({k: [v] for k, v in self.as_row().items()}, schema=SUMMARY_ARROW)

    @classmethod
    def from_row(cls, row: Any) -> "TaskSummary":
        """Read a summary row back (a Spark ``Row`` or a dict of :meth:`as_row`)."""
        return cls(
            spark_partition=row["spark_partition"],
            input_count=row["input_count"],
            output_count=row["output_count"],
            skipped=row["skipped"],
            collected=pickle.loads(row["collected"]) if row["collected"] else None,
            sink_payloads=pickle.loads(row["sink_payloads"]) if row["sink_payloads"] else None,
            error=pickle.loads(row["error"]) if row["error"] else None,
            producer_flush=ProducerFlush(row["producer_flush"] or 0),
        )
