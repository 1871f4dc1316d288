"""Driver side: start the streaming query, dispatch micro-batches, enforce stop conditions."""

from __future__ import annotations

import functools
import json
import logging
import os
import threading
import time
import uuid
from typing import Any, Callable, Optional

from ..exceptions import ProcessingError
from ..exceptions.base import processing_error
from ._kafka_source import RangeReader, fused_group_by_options, packed_options, query_source, source_options
from ._plan import PipelinePlan
from .pacing import records_per_batch, records_per_partition
from .planner_processes import release_planner_processes
from .strategies import (
    FUSED_GROUP_BY,
    FUSED_SOURCE,
    ONE_FLUSH_PER_PARTITION,
    PACKED_BUCKETS,
    RELEASE_PLANNERS,
    STATE_READS_SOURCE,
    TASK_PER_CORE,
    Strategies,
)
from .task_entry import GROUPED_SCHEMA, run_bucket, run_pre_shuffle, run_task
from .bucketing import end_buckets, key_bucket_column, partition_bucket_column
from .count_budget import CountBudget
from .lag import LagMonitor, end_offsets, total_lag
from .progress_log import BatchLog
from .summary import SUMMARY_SCHEMA, ProducerFlush, TaskSummary
from .session import get_spark, parallelism

__all__ = ("QueryRunner", "RunLimits", "kafka_source_failure", "run_strategies")

logger = logging.getLogger(__name__)


class _StopRequested(Exception):
    """Raised inside foreachBatch once a stop was requested, so the batch is not committed."""


def run_strategies() -> Strategies:
    """The fast paths a run takes: :attr:`QueryRunner.strategies` when set (tests name plain
    paths there), else all but those ``STREAMSPARK_PLAIN_PATHS`` names."""
    return QueryRunner.strategies if QueryRunner.strategies is not None else Strategies.from_environment()


def kafka_source_failure(exc: BaseException) -> Optional[Exception]:
    """The application's error for a query that failed because the Kafka source could not plan
    a micro-batch (Spark wraps the source's error in its own, with the query plan): a
    :class:`~streamspark.exceptions.BrokerUnreachableError` when the broker did not answer,
    a :class:`~streamspark.exceptions.StreamsparkException` otherwise (a topic that
    disappeared, no committed offset with ``auto_offset_reset="error"``). None for other errors.

    >>> kafka_source_failure(RuntimeError("... KafkaSourceError: Kafka broker 'h:1' did not answer within 5.0s: x\\n..."))
    BrokerUnreachableError("Kafka broker 'h:1' did not answer within 5.0s: x")
    """
    from ..exceptions import BrokerUnreachableError, StreamsparkException

    text = str(exc)
    marker = "KafkaSourceError: "
    at = text.rfind(marker)
    if at < 0:
        return None
    message = text[at + len(marker) :].replace("\\n", "\n").splitlines()[0].strip()
    if "did not answer" in message:
        return BrokerUnreachableError(message)
    return StreamsparkException(message)


class RunLimits:
    """Stop conditions of one ``Application.run`` call."""

    def __init__(self, timeout: float = 0.0, count: int = 0) -> None:
        self.timeout = timeout
        self.count = count


class QueryRunner:
    """Runs one application's pipeline as one Spark Structured Streaming query."""

    #: the fast paths runs may take (``engine/strategies.py``); tests name some ``plain`` to run
    #: the plain path instead and compare the two. None: all but those named in the
    #: ``STREAMSPARK_PLAIN_PATHS`` environment variable
    strategies: Optional[Strategies] = None
    #: when a run with ``timeout`` or ``count`` gives back Spark's idle planner processes (the
    #: ``release-planners`` path): once its reader is planned, when the query has run this
    #: many seconds or a micro-batch this long. The session's next query starts them again,
    #: ~0.7 s: a short query (a test's) would gain little for it. A run without either (a
    #: service's ``app.run()``) gives them back as soon as its reader is planned, before its
    #: first micro-batch's records fill the workers' memory
    release_planners_after: float = 20.0
    release_planners_batch: float = 3.0

    def __init__(
        self,
        plan: PipelinePlan,
        kafka_config: dict[str, Any],
        auto_offset_reset: str,
        checkpoint_dir: str,
        spark_master: str,
        spark_conf: dict[str, Any],
        trigger_interval: float,
        max_records_per_partition: Optional[int],
        request_timeout: float,
        sinks_by_node: dict[int, Any],
        progress: Optional[Callable[[dict[str, Any]], None]] = None,
        state_buckets: int = 64,
        min_batch_interval: float = 0.0,
        commit_every: int = 0,
    ) -> None:
        self.plan = plan
        self.kafka_config = kafka_config
        self.auto_offset_reset = auto_offset_reset
        self.checkpoint_dir = checkpoint_dir
        self.spark_master = spark_master
        self.spark_conf = spark_conf
        self.trigger_interval = trigger_interval
        #: the least seconds between two micro-batches without a backlog, which the source
        #: enforces (``pacing.min_batch_interval``)
        self.min_batch_interval = min_batch_interval
        #: None: the default of ``pacing.records_per_partition``, lowered to ``commit_every``
        self.max_records_per_partition = max_records_per_partition
        self.commit_every = commit_every
        self.request_timeout = request_timeout
        self.sinks_by_node = sinks_by_node
        self.progress = progress
        self.state_buckets = state_buckets

        self.collected: list[Any] = []
        self.outputs = 0
        self.inputs = 0
        self.batches = 0
        #: seconds the micro-batches that read or wrote records took, each from the call of the
        #: driver's handler (its input planned) to its end
        self.batch_seconds = 0.0
        self._stop = threading.Event()
        #: during ``run(count=...)``: how many records the next micro-batch may read
        self._count_budget: Optional[CountBudget] = None
        self._failure: Optional[BaseException] = None
        self._in_batch = threading.Event()
        #: whether a micro-batch with records completed (its reader is planned)
        self._read_records = False
        #: how long the longest micro-batch so far took, and when the one in flight started
        self._longest_batch = 0.0
        self._batch_started: Optional[float] = None
        #: id of the last micro-batch whose foreachBatch returned successfully
        self._last_done_batch: Optional[int] = None
        self._last_activity: Optional[float] = None
        self._lock = threading.Lock()
        self._query: Any = None
        self._spark: Any = None
        #: set by ``Application.stop(fail=True)``: do not wait for the batch in flight
        self.fail_fast = False
        #: processing-time timers in the plan (empty micro-batches then run every trigger)
        self._timers = plan.idle_ms is not None
        #: the query stopped because the Kafka source could not plan (broker unreachable, ...)
        self._source_failed = False
        self.lag_monitor = LagMonitor(kafka_config, timeout=min(request_timeout, 5.0))
        #: the micro-batches' log lines (INFO at most every 10 s, every batch at DEBUG)
        self.batch_log = BatchLog(logger)
        self._progress_seen: Optional[str] = None
        self._batch_had_data = False

    # --- stop control ----------------------------------------------------------------
    def request_stop(self) -> None:
        self._stop.set()

    # --- micro-batch -----------------------------------------------------------------
    def _on_batch(self, batch_df: Any, batch_id: int, limits: RunLimits) -> None:
        if self._stop.is_set():
            raise _StopRequested()
        self._in_batch.set()
        batch_started = self._batch_started = time.monotonic()
        try:
            self._process_batch(batch_df, batch_id, limits)
            self._last_done_batch = batch_id
        except _StopRequested:
            raise
        except BaseException as exc:
            # a stop that does not wait for the batch (a failed source, stop(fail=True)) interrupts
            # it: that interruption is not the run's failure
            if not (self.fail_fast and self._stop.is_set()):
                # a task that could not read Kafka (the source's, or a state bucket reading its
                # ranges) fails the batch with the source's error, as a failed planning does
                source_error = kafka_source_failure(exc) if isinstance(exc, Exception) else None
                if source_error is not None:
                    source_error.__cause__ = exc
                    self._source_failed = True
                self._failure = source_error or exc
            self._stop.set()
            raise
        finally:
            if not self._timers or self._batch_had_data:
                self._last_activity = time.monotonic()
            self._longest_batch = max(self._longest_batch, time.monotonic() - batch_started)
            self._batch_started = None
            self._in_batch.clear()

    def _process_batch(self, batch_df: Any, batch_id: int, limits: RunLimits) -> None:
        started = time.monotonic()
        started_ms = time.time_ns() // 1_000_000
        plan = self.plan
        self._batch_had_data = False
        summaries = [TaskSummary.from_row(row) for row in batch_df.collect()]
        try:
            self._raise_errors(summaries)
        except ProcessingError:
            for sink in self.sinks_by_node.values():
                sink.on_batch_abort()
            raise
        batch_inputs = sum(s.input_count for s in summaries)
        batch_outputs = sum(s.output_count for s in summaries)
        self._batch_had_data = bool(batch_inputs or batch_outputs)
        skipped = sum(s.skipped for s in summaries)
        # the batch succeeded: hand over what driver-side sinks and the collector gathered
        for summary in summaries:
            for node_id, items in (summary.sink_payloads or {}).items():
                self.sinks_by_node[node_id].receive_from_worker(items)
        for sink in self.sinks_by_node.values():
            try:
                sink.on_batch_commit(batch_id, started_ms)
            except Exception as exc:
                for other in self.sinks_by_node.values():
                    other.on_batch_abort()
                raise processing_error(
                    f"sink failed: {type(sink).__name__} could not commit batch {batch_id}: {exc}", exc, stage="sink"
                ) from exc
        if batch_inputs:
            self._read_records = True
        with self._lock:
            self.inputs += batch_inputs
            self.outputs += batch_outputs
            self.batches += 1
            if self._count_budget is not None and batch_inputs:
                self._count_budget.update(self.inputs, self.outputs)
            if plan.collect:
                for summary in sorted(summaries, key=lambda s: s.spark_partition):
                    if summary.collected:
                        self.collected.extend(summary.collected)
        seconds = time.monotonic() - started
        if batch_inputs or batch_outputs:
            with self._lock:
                self.batch_seconds += seconds
        if batch_inputs:
            self.batch_log.batch(batch_id, batch_inputs, batch_outputs, skipped, seconds)
        if self.progress is not None:
            self.progress(
                {
                    "batch_id": batch_id,
                    "inputs": batch_inputs,
                    "outputs": batch_outputs,
                    "total_inputs": self.inputs,
                    "total_outputs": self.outputs,
                }
            )
        if limits.count and self.outputs >= limits.count:
            self._stop.set()

    @staticmethod
    def _raise_errors(summaries: list[TaskSummary]) -> None:
        """Raise a task error as a ``ProcessingError``: of the records that failed, the first
        by (topic, partition, offset), so within a partition the one Quix Streams would have
        met first (state buckets run apart, so a later record of one bucket can fail before
        an earlier one of another); then errors without a record. Also raise when a Spark partition's state buckets left their
        deliveries to an end bucket that did not report."""
        failed = [s.error for s in summaries if s.error is not None]
        if failed:
            info = min(failed, key=lambda e: (e.offset is None, e.topic or "", e.partition or 0, e.offset or 0))
            cause = info.cause()
            error = processing_error(
                info.describe(), cause, topic=info.topic, partition=info.partition, offset=info.offset, stage=info.stage.value
            )
            error.worker_traceback = info.traceback  # type: ignore[attr-defined]
            if cause is not None:
                raise error from cause
            raise error
        unconfirmed = {s.spark_partition for s in summaries if s.producer_flush is ProducerFlush.DEFERRED} - {
            s.spark_partition for s in summaries if s.producer_flush is ProducerFlush.PARTITION_END
        }
        if unconfirmed:
            raise ProcessingError(
                f"producer failed: the deliveries of Spark partition(s) {sorted(unconfirmed)} were not confirmed "
                "(their end bucket did not run); the micro-batch is not committed",
                stage="producer",
            )

    # --- the query -------------------------------------------------------------------
    def start(self, limits: RunLimits) -> Any:
        # the query starts right away and starts Spark's Python processes itself: a warm-up of a
        # session started here would only compete with it for the cores and run its tasks first
        spark = self._spark = get_spark(self.spark_master, self.spark_conf, warmup=False)
        for sink in self.sinks_by_node.values():
            sink.on_query_start(self.checkpoint_dir)
        plan = self.plan
        plan.validate()
        strategies = self.strategies if self.strategies is not None else Strategies.from_environment()
        plan.strategies = strategies.names_for(plan)
        packed = PACKED_BUCKETS.name in plan.strategies
        fused = FUSED_SOURCE.name in plan.strategies
        fused_group_by = FUSED_GROUP_BY.name in plan.strategies
        limited = bool(limits.timeout or limits.count)
        cap = self.max_records_per_partition or records_per_partition(plan, fused, limited, commit_every=self.commit_every)
        # a cap the application sets is the only bound; the defaults bound a held micro-batch in all
        budget = 0 if self.max_records_per_partition else records_per_batch(plan, fused, limited)
        logger.debug("A micro-batch takes at most %d records of a partition, %s in all", cap, budget or "any number")
        options = source_options(
            topics=sorted(plan.roots),
            auto_offset_reset=self.auto_offset_reset,
            max_records_per_partition=cap,
            max_records_per_batch=budget,
            request_timeout=self.request_timeout,
            parallelism=parallelism(spark),
            min_batch_interval=self.min_batch_interval,
            aligned_topics=_aligned_topics(plan),
            task_per_core=TASK_PER_CORE.name in plan.strategies,
            count_budget_file=self._count_budget.path if self._count_budget is not None else None,
        )
        # the Kafka settings and a fused plan (credentials) travel with the source's class, not
        # as options, which the query plan shows (see query_source)
        source = query_source(self.kafka_config, plan if fused or fused_group_by else None)
        spark.dataSource.register(source)
        if fused:
            summaries = spark.readStream.format(source.name()).options(**options).load()
        elif fused_group_by:
            # the source runs the steps before the group_by and packs the re-keyed records
            options.update(fused_group_by_options(self.state_buckets))
            df = spark.readStream.format(source.name()).options(**options).load()
            summaries = self._pipeline(df, packed=True)
        else:
            if packed:
                if ONE_FLUSH_PER_PARTITION.name in plan.strategies:
                    partitions = shuffle_partitions(spark, self.checkpoint_dir)
                    plan.end_buckets = end_buckets(partitions) if partitions else ()
                reads_source = STATE_READS_SOURCE.name in plan.strategies
                if reads_source:
                    # the state buckets read their partitions' records with the source's settings
                    plan.range_reader = RangeReader(json.dumps(self.kafka_config), self.request_timeout)
                options.update(
                    packed_options(
                        self.state_buckets,
                        plan.by_partition,
                        plan.end_buckets,
                        plan.bucket_labels,
                        by_partition_number=plan.bucket_by_number,
                        ranges_in_state=reads_source,
                    )
                )
            df = spark.readStream.format(source.name()).options(**options).load()
            summaries = self._pipeline(df, packed)
        writer = (
            summaries.writeStream.queryName(f"streamspark-{uuid.uuid4().hex[:8]}")
            .foreachBatch(lambda batch_df, batch_id: self._on_batch(batch_df, batch_id, limits))
            .option("checkpointLocation", self.checkpoint_dir)
            .trigger(processingTime=f"{int(self.trigger_interval * 1000)} milliseconds")
        )
        self._query = writer.start()
        return self._query

    def _pipeline(self, df: Any, packed: bool = False) -> Any:
        """The streaming plan: records in, one summary row per task (or per state bucket) out.

        :param packed: ``df`` has the source's packed rows, already bucketed (stateful
            pipelines; after a group_by, the re-keyed records of the fused group_by path).
        """
        plan = self.plan
        plan.validate()
        if not plan.stateful and not plan.group_nodes:
            return df.mapInArrow(functools.partial(run_task, plan=plan), SUMMARY_SCHEMA)
        from pyspark.sql.streaming.state import GroupStateTimeout

        buckets = self.state_buckets
        if packed:
            keyed = df
        elif plan.group_nodes:
            keyed = df.mapInArrow(functools.partial(run_pre_shuffle, plan=plan, buckets=buckets), GROUPED_SCHEMA)
        elif plan.by_partition:
            # a window closing by partition sees every key of a Kafka partition in one bucket
            keyed = df.withColumn(
                "_bucket", partition_bucket_column(buckets, plan.bucket_labels, by_number=plan.bucket_by_number)
            )
        else:
            keyed = df.withColumn("_bucket", key_bucket_column(buckets, labels=plan.bucket_labels))
        return keyed.groupBy("_bucket").applyInPandasWithState(
            functools.partial(run_bucket, plan, buckets),
            outputStructType=SUMMARY_SCHEMA,
            stateStructType="blob binary",
            outputMode="append",
            # windows closing quiet keys need timers (Spark then runs a batch every trigger)
            timeoutConf=GroupStateTimeout.ProcessingTimeTimeout if plan.idle_ms is not None else GroupStateTimeout.NoTimeout,
        )

    def run(self, limits: RunLimits) -> None:
        """Start the query and block until a stop condition, a stop request or a failure."""
        if limits.count:
            self._count_budget = CountBudget(limits.count, self.plan.outputs_per_record())
        try:
            self._run(limits)
        finally:
            if self._count_budget is not None:
                self._count_budget.close()

    def _run(self, limits: RunLimits) -> None:
        query = self.start(limits)
        started = time.monotonic()
        release_planners = RELEASE_PLANNERS.name in self.plan.strategies
        limited = bool(limits.timeout or limits.count)
        try:
            while True:
                try:
                    if query.awaitTermination(0.2):
                        break
                except Exception as exc:
                    if self._failure is not None or self._stop.is_set():
                        break
                    source_error = kafka_source_failure(exc)
                    if source_error is None:
                        raise
                    self._failure = source_error
                    self._source_failed = True
                    break
                now = time.monotonic()
                if self._stop.is_set():
                    break
                if release_planners and self._planners_idle(now - started, limited):
                    release_planners = False
                    release_planner_processes(self._spark)
                self._watch_lag(query)
                # one status read per loop (a JVM round trip) serves both checks below
                status = query.status if (self.sinks_by_node or limits.timeout) else {}
                if self.sinks_by_node and not self._in_batch.is_set():
                    if not status.get("isDataAvailable") and not status.get("isTriggerActive"):
                        # a record is planned at most a trigger after it arrived, or after the
                        # source held it back for the rest of min_batch_interval
                        waited = self.trigger_interval + self.min_batch_interval
                        caught_up = time.time_ns() // 1_000_000 - int(waited * 1000)
                        for sink in self.sinks_by_node.values():
                            sink.on_source_idle(caught_up)
                if limits.timeout:
                    # with timers Spark runs a batch every trigger: only batches with data count
                    active = (self._in_batch.is_set() and not self._timers) or status.get("isDataAvailable")
                    if active:
                        self._last_activity = now
                    elif self._last_activity is None and status.get("message") == "Waiting for data to arrive":
                        # the idle clock starts once the source has been asked and had nothing
                        # (the reference starts it after the first assignment and recovery)
                        self._last_activity = now
                    if self._last_activity is not None and now - self._last_activity >= limits.timeout:
                        logger.info("No new messages for %.1fs: stopping", limits.timeout)
                        break
        finally:
            self._shutdown(query)
            self.lag_monitor.close()
        # a failure inside a micro-batch surfaces as the user's error, not Spark's wrapper
        if self._failure is not None:
            raise self._failure

    def _planners_idle(self, running: float, limited: bool) -> bool:
        """Whether the query, running for ``running`` seconds, is past the use of Spark's
        planner processes and, in a ``limited`` run (``timeout`` or ``count``), long-lived
        enough to give them back.

        Its reader is planned by its first micro-batch with records (a batch without any, as
        timers run, reads nothing); the query must be the session's only one, as another's
        planning could be using them."""
        batch_started = self._batch_started
        in_batch = time.monotonic() - batch_started if batch_started is not None else 0.0
        short = running < self.release_planners_after and max(self._longest_batch, in_batch) < self.release_planners_batch
        if limited and short:
            return False
        # a first micro-batch's stage runs once its reader is planned (without timers every
        # micro-batch has records); until a micro-batch starts, no JVM call is needed to know
        if not self._read_records and (batch_started is None or self._timers):
            return False
        try:
            # another query of the session counts here once started; one that an application
            # of the same process is still creating (its source's load()) does not yet
            if len(self._spark.streams.active) > 1:
                return False
            return self._read_records or bool(self._spark.sparkContext.statusTracker().getActiveStageIds())
        except Exception as exc:  # the JVM is going away: the run ends anyway
            logger.debug("Cannot tell whether the query's planning is done: %s", exc)
            return False

    def _watch_lag(self, query: Any) -> None:
        """After each new progress report (a committed micro-batch), the consumer lag."""
        try:
            progress = query.lastProgress
        except Exception:  # the query is failing; run() reports it
            return
        stamp = progress.get("timestamp") if progress else None
        if stamp is None or stamp == self._progress_seen:
            return
        self._progress_seen = stamp
        self.lag_monitor.update(progress)

    def status(self) -> dict[str, Any]:
        """Where the run is: batches, records in and out, and the consumer lag per
        topic-partition after the last committed micro-batch (see :mod:`.lag`).

        ``{"running": True, "batches": 12, "inputs": 5000, "outputs": 4990,
        "last_batch_id": 11, "lag": {"readings": {0: 0, 1: 12}}, "total_lag": 12}``
        """
        with self._lock:
            return {
                "running": self._query is not None and not self._stop.is_set(),
                "batches": self.batches,
                "inputs": self.inputs,
                "outputs": self.outputs,
                "last_batch_id": self._last_done_batch,
                "lag": {t: dict(parts) for t, parts in self.lag_monitor.lag.items()},
                "total_lag": total_lag(self.lag_monitor.lag),
            }

    def _shutdown(self, query: Any, drain_timeout: float = 60.0) -> None:
        self._stop.set()
        deadline = time.monotonic() + drain_timeout
        while not self.fail_fast and self._in_batch.is_set() and time.monotonic() < deadline:
            time.sleep(0.05)
        if not self.fail_fast:
            self._await_commit_log(query, deadline)
        try:
            query.stop()
        except Exception as exc:  # stopping an already failed query
            logger.debug("query.stop(): %s", exc)
        try:
            # the query's thread ends after stop() returns (it still tells Spark's state store
            # coordinator): let it, so that a process exiting now does not cut it short
            query.awaitTermination(10)
        except Exception as exc:  # it ended with the error that stopped it (reported by run())
            logger.debug("query ended: %s", exc)
        for sink in self.sinks_by_node.values():
            try:
                sink.on_query_stop()
            except Exception:
                logger.exception("Stopping sink %s failed", type(sink).__name__)
        self._commit_last_progress(query)

    def _await_commit_log(self, query: Any, deadline: float) -> None:
        """Wait until Spark wrote the commit log entry of the last batch we processed.

        foreachBatch returning is not the end of a micro-batch: Spark then writes
        ``commits/<batch id>`` and only after that reports the batch's progress. Stopping the
        query in between interrupts that write, and the next run would replay a batch whose
        outputs were already delivered. Progress is reported after the commit log entry, so
        the last progress naming the batch means it is committed.
        """
        target = self._last_done_batch
        if target is None:
            return
        while time.monotonic() < deadline:
            try:
                if not query.isActive:
                    return
                progress = query.lastProgress
            except Exception as exc:  # the query failed meanwhile
                logger.debug("waiting for the commit log: %s", exc)
                return
            if progress is not None and progress.get("batchId", -1) >= target:
                return
            time.sleep(0.02)
        logger.warning("Micro-batch %d was processed but Spark did not commit it before the stop", target)

    def _commit_last_progress(self, query: Any) -> None:
        """Commit the end offsets of the last committed micro-batch to the Kafka consumer group.

        Spark tells a source to commit a batch only when it plans the next one, so the last
        batch before a stop would otherwise never reach the group (lag tools would lag behind).
        """
        if self._source_failed:
            return  # the broker did not answer: the group keeps its last committed offsets
        try:
            progress = query.lastProgress
        except Exception as exc:  # Spark's JVM is gone (Ctrl+C reaches it too): nothing to read
            logger.debug("No last progress to commit on stop: %s", exc)
            return
        end = end_offsets(progress)
        if not end:
            return
        from confluent_kafka import Consumer, TopicPartition

        offsets = [TopicPartition(t, p, o) for t, ps in end.items() for p, o in ps.items()]
        consumer = Consumer({**self.kafka_config, "enable.auto.commit": False})
        try:
            consumer.commit(offsets=offsets, asynchronous=False)
        except Exception as exc:
            logger.warning("Could not commit consumer-group offsets on stop: %s", exc)
        finally:
            consumer.close()


def shuffle_partitions(spark: Any, checkpoint_dir: str) -> Optional[int]:
    """The shuffle partitions of the query about to start: a stateful query keeps the number
    its checkpoint was started with (Spark restores it from the offset log), else the session's.
    None when a checkpoint exists but does not say (or cannot be read here: not a local path).
    """
    if "://" in checkpoint_dir and not checkpoint_dir.startswith("file:"):
        return None
    offsets = os.path.join(checkpoint_dir.removeprefix("file:"), "offsets")
    logged = sorted((int(name) for name in os.listdir(offsets) if name.isdigit()), reverse=True) if os.path.isdir(offsets) else []
    if not logged:
        return int(spark.conf.get("spark.sql.shuffle.partitions"))
    try:
        with open(os.path.join(offsets, str(logged[0])), encoding="utf-8") as fh:
            fh.readline()  # the log's version
            metadata = json.loads(fh.readline())
        return int(metadata["conf"]["spark.sql.shuffle.partitions"])
    except (OSError, ValueError, KeyError, TypeError) as exc:
        logger.debug("Shuffle partitions of %s unknown: %s", checkpoint_dir, exc)
        return None


def _aligned_topics(plan: PipelinePlan) -> list[str]:
    """The topics whose records meet in a merge (a ``concat`` or a join) and so run in timestamp
    order: the source ends their micro-batches at a common time (none: ``[]``)."""
    from ..core.stream import sources_of
    from ..core.stream.nodes import MergeNode

    if not plan.time_aligned:
        return []
    names = {id(root): name for name, root in plan.roots.items()}
    found: set[str] = set()
    for node in plan.nodes():
        if isinstance(node, MergeNode):
            roots = sources_of(node)
            if len(roots) > 1:
                found.update(names[id(root)] for root in roots if id(root) in names)
    return sorted(found)
