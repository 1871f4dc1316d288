"""How often a query starts a micro-batch: the meaning of ``commit_interval`` on Spark.

In the reference, records flow through the pipeline as they arrive and ``commit_interval``
only paces the checkpoints. A Spark micro-batch is both: the records of one batch are
processed together and their offsets (and state) are committed at its end. So a run whose
outputs are all Kafka topics, at least once, starts a micro-batch as soon as records are
there (Spark's trigger then only sets how often an idle query asks the broker for more): its
outputs arrive within a micro-batch of their input, and it commits more often than
``commit_interval``, never less.

The other runs start a micro-batch every ``commit_interval``, which is what the reference makes
observable for them, unless the previous micro-batch left a backlog (a partition had more
records than ``max_records_per_partition``): then the next one starts at once. The Kafka
source holds back new records until the interval is over (``min_batch_interval``), so Spark's
trigger stays short and a backlog is read at full speed.

- a pipeline with a sink: the reference flushes sinks on each commit, so a sink gets a batch
  per ``commit_interval`` (a micro-batch per poll would write many small files or requests);
- exactly-once: the reference's outputs become visible (a transaction commits) on each commit.

Windows with ``close_idle_after`` keep Spark's trigger at ``commit_interval``: Spark runs a
micro-batch every trigger to fire their timers, with or without new records.

A run with ``timeout`` or ``count`` (tests, ``sdf``-style checks) starts a micro-batch at
least every 0.5 s so that it notices the end of its input promptly.

How many records a micro-batch takes, unless ``max_records_per_partition`` says: on the fused
stateless path with all its outputs Kafka topics, at least once, in a run without ``timeout``
or ``count``, :data:`STREAMED_BATCH_RECORDS` of each partition. Its tasks stream the records
from the broker through the steps to the producer, so the size of a micro-batch costs no
memory, and each micro-batch costs fixed work (planning, the checkpoint's offset and commit
logs, scheduling its tasks): a backlog is read in fewer micro-batches. Any other pipeline holds
a micro-batch's records somewhere (the shuffle and the state buckets, a sink's buffer, a
transaction), which costs memory by the records of the whole micro-batch, whatever the number of
partitions they come from: it takes :data:`BATCH_RECORDS` in all, shared out over the
partitions (a partition with a small backlog is read to its end, the others split the rest).
``commit_every``, when set, lowers what a micro-batch takes from each partition.

>>> from types import SimpleNamespace
>>> topics_only = SimpleNamespace(eos=None, idle_ms=None, sink_nodes=lambda: [])
>>> trigger_interval(topics_only, commit_interval=5.0, limited=False), min_batch_interval(topics_only, 5.0, False)
(0.1, 0.0)
>>> with_sink = SimpleNamespace(eos=None, idle_ms=None, sink_nodes=lambda: ["a sink"])
>>> trigger_interval(with_sink, commit_interval=5.0, limited=False), min_batch_interval(with_sink, 5.0, False)
(0.1, 5.0)
>>> min_batch_interval(with_sink, commit_interval=5.0, limited=True)
0.5
>>> timers = SimpleNamespace(eos=None, idle_ms=1000, sink_nodes=lambda: [])
>>> trigger_interval(timers, commit_interval=5.0, limited=False), min_batch_interval(timers, 5.0, False)
(5.0, 0.0)
>>> records_per_partition(topics_only, fused=True, limited=False), records_per_batch(topics_only, fused=True, limited=False)
(250000, 0)
>>> records_per_batch(with_sink, fused=True, limited=False), records_per_batch(topics_only, fused=False, limited=False)
(500000, 500000)
>>> records_per_partition(topics_only, fused=True, limited=False, commit_every=1000)
1000
"""

from __future__ import annotations

from typing import Any

__all__ = (
    "BATCH_RECORDS",
    "LIMITED_RUN_INTERVAL",
    "POLL_INTERVAL",
    "STREAMED_BATCH_RECORDS",
    "flows_as_it_arrives",
    "min_batch_interval",
    "records_per_batch",
    "records_per_partition",
    "trigger_interval",
)

#: seconds between two checks for new records while a query is idle (a check lists the
#: topics' end offsets on the broker)
POLL_INTERVAL = 0.1

#: the longest interval between micro-batches of a run with ``timeout`` or ``count``
LIMITED_RUN_INTERVAL = 0.5

#: the records a micro-batch of a pipeline that holds them takes from all partitions together
#: (see the module). Peak memory (driver, JVM and workers, proportional set size) with 500k
#: records of ~150 B in one stateful micro-batch on 2 cores: 1.2-1.35 GB; with 1M, 1.3-1.7 GB.
BATCH_RECORDS = 500_000

#: the records a micro-batch takes from a partition when the pipeline's tasks stream them
#: (see the module)
STREAMED_BATCH_RECORDS = 250_000


def flows_as_it_arrives(plan: Any) -> bool:
    """True when ``plan``'s micro-batches start as soon as records arrive (see the module):
    at-least-once, no sink, no processing-time timers."""
    return plan.eos is None and plan.idle_ms is None and not plan.sink_nodes()


def _interval(commit_interval: float, limited: bool) -> float:
    return min(commit_interval, LIMITED_RUN_INTERVAL) if limited else commit_interval


def trigger_interval(plan: Any, commit_interval: float, limited: bool) -> float:
    """Spark's trigger interval, in seconds, for a run of ``plan``: how often an idle query
    looks for new records (``commit_interval`` for windows with timers).

    :param commit_interval: the application's ``commit_interval``.
    :param limited: the run has a ``timeout`` or ``count``.
    """
    interval = _interval(commit_interval, limited)
    return interval if plan.idle_ms is not None else min(interval, POLL_INTERVAL)


def min_batch_interval(plan: Any, commit_interval: float, limited: bool) -> float:
    """The least seconds from the start of one micro-batch to the next while there is no
    backlog, which the Kafka source enforces: 0 when records flow as they arrive, and for
    windows with timers (Spark's trigger paces those)."""
    if flows_as_it_arrives(plan) or plan.idle_ms is not None:
        return 0.0
    return _interval(commit_interval, limited)


def _streamed(plan: Any, fused: bool, limited: bool) -> bool:
    return fused and not limited and flows_as_it_arrives(plan)


def records_per_partition(plan: Any, fused: bool, limited: bool, commit_every: int = 0) -> int:
    """The most records a micro-batch of ``plan`` takes from a partition when the application
    does not set ``max_records_per_partition`` (see the module).

    :param fused: the pipeline runs stateless inside the source (the ``fused-source`` path).
    :param limited: the run has a ``timeout`` or ``count``.
    :param commit_every: the application's ``commit_every``: when set (above 0), the most.
    """
    cap = STREAMED_BATCH_RECORDS if _streamed(plan, fused, limited) else BATCH_RECORDS
    return min(cap, commit_every) if commit_every > 0 else cap


def records_per_batch(plan: Any, fused: bool, limited: bool) -> int:
    """The most records a micro-batch of ``plan`` takes from all partitions together when the
    application does not set ``max_records_per_partition``; 0: no such bound (the tasks stream
    their records, see the module)."""
    return 0 if _streamed(plan, fused, limited) else BATCH_RECORDS
