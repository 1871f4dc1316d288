"""Fast paths: faster ways to run a part of a plan, each with the plain path it must match.

A strategy says where it applies (a predicate over the plan, or over one node for node-level
strategies) and names the test that runs it against its plain path on the same input. The
query runner asks :meth:`Strategies.uses` before taking a fast path; disabling a strategy
(``Strategies(plain={...})``) gives the plain path, which is how the tests compare the two.

>>> from streamspark.engine.strategies import Strategies, FUSED_SOURCE
>>> Strategies().enabled(FUSED_SOURCE)
True
>>> Strategies(plain={"fused-source"}).enabled(FUSED_SOURCE)
False
>>> Strategies(plain={"no-such-path"})
Traceback (most recent call last):
...
ValueError: Unknown fast path(s) ['no-such-path']: known are ['avro-chunks', 'avro-output-chunks', 'columnar-prefix', 'columnar-windows', 'compressed-state', 'fused-group-by', 'fused-source', 'group-by-shuffle', 'one-flush-per-partition', 'packed-buckets', 'raw-sink-chunks', 'release-planners', 'state-reads-source', 'task-per-core']
"""

from __future__ import annotations

from dataclasses import dataclass
import os
from typing import TYPE_CHECKING, Callable, Iterable, Mapping, Optional

from ..core.stream.nodes import StreamNode, WindowNode

if TYPE_CHECKING:
    from ._plan import PipelinePlan

__all__ = (
    "Strategy",
    "Strategies",
    "FUSED_SOURCE",
    "PACKED_BUCKETS",
    "GROUP_BY_SHUFFLE",
    "FUSED_GROUP_BY",
    "COLUMNAR_WINDOWS",
    "ONE_FLUSH_PER_PARTITION",
    "RAW_SINK_CHUNKS",
    "RELEASE_PLANNERS",
    "AVRO_CHUNKS",
    "COLUMNAR_PREFIX",
    "AVRO_OUTPUT_CHUNKS",
    "TASK_PER_CORE",
    "STATE_READS_SOURCE",
    "COMPRESSED_STATE",
    "STRATEGIES",
    "PLAIN_PATHS_ENV",
)


#: names the fast paths a run leaves out (comma-separated): see :meth:`Strategies.from_environment`
PLAIN_PATHS_ENV = "STREAMSPARK_PLAIN_PATHS"


@dataclass(frozen=True)
class Strategy:
    """A fast path.

    :param name: how tests and ``Strategies(plain=...)`` name it.
    :param applies: whether the plan can take it (plan-level strategies).
    :param node_applies: for node-level strategies, whether one node can take it (the node
        then compiles its fast form when the plan's strategies include this one).
    :param plain: what runs instead.
    :param checked_by: the test module that runs both paths on the same input.
    """

    name: str
    applies: Callable[["PipelinePlan"], bool]
    plain: str
    checked_by: str
    node_applies: Callable[[StreamNode], bool] | None = None
    #: strategies this one builds on (taken only when they are)
    requires: tuple[str, ...] = ()


def _stateless(plan: "PipelinePlan") -> bool:
    return not plan.stateful and not plan.group_nodes


def _stateful_without_group_by(plan: "PipelinePlan") -> bool:
    return plan.stateful and not plan.group_nodes


def _columnar_window(node: StreamNode) -> bool:
    return isinstance(node, WindowNode) and node.columnar_form() is not None


#: a stateless pipeline runs inside the Kafka source's ``read()``: records never cross the JVM
FUSED_SOURCE = Strategy(
    name="fused-source",
    applies=_stateless,
    plain="source rows -> mapInArrow(run_task)",
    checked_by="tests/engine/test_fused_source.py",
)

#: a stateful pipeline without group_by: the source assigns records to state buckets and packs
#: them (a row per bucket and chunk reaches the shuffle, not a row per record)
PACKED_BUCKETS = Strategy(
    name="packed-buckets",
    applies=_stateful_without_group_by,
    plain="a row per record, its bucket computed by Spark",
    checked_by="tests/engine/test_packed_buckets.py",
)


def _shuffled_group_by(plan: "PipelinePlan") -> bool:
    return bool(plan.group_nodes) and plan.shuffle_refusal() is None


#: a pipeline with a group_by re-keys its records through a Spark shuffle within the query,
#: where the shuffle keeps the state of the keys before and after it apart (no stateful step
#: before or beside the group_by, see ``PipelinePlan.shuffle_refusal``); the reference writes
#: them to a repartition topic and reads them back (``engine/repartition.py``), which the
#: application does when this path is left out or the shuffle cannot run the plan
GROUP_BY_SHUFFLE = Strategy(
    name="group-by-shuffle",
    applies=_shuffled_group_by,
    plain="a repartition topic per group_by, written and read back by the same query",
    checked_by="tests/engine/test_repartition.py",
)

#: a pipeline with a group_by: the steps before the group_by run inside the Kafka source's
#: ``read()``, which packs the re-keyed records per state bucket of their new key (a row per
#: bucket and chunk reaches the shuffle, not a row per record, and records never cross the JVM
#: between the source and the pre-shuffle steps)
FUSED_GROUP_BY = Strategy(
    name="fused-group-by",
    applies=lambda plan: bool(plan.group_nodes),
    plain="source rows -> mapInArrow(run_pre_shuffle), a row of pickled fields per re-keyed record",
    checked_by="tests/engine/test_fused_group_by.py",
    requires=("group-by-shuffle",),
)

#: ``.final()`` time windows with built-in aggregations are computed a batch at a time
COLUMNAR_WINDOWS = Strategy(
    name="columnar-windows",
    applies=lambda plan: any(_columnar_window(node) for node in plan.window_nodes()),
    plain="every window record by record",
    checked_by="tests/dataframe/windows/test_windows_e2e.py",
    node_applies=_columnar_window,
)

#: at-least-once stateful pipelines: the state buckets of a Spark task leave their produced
#: messages in the worker's producer, and one end bucket per task, which Spark runs after them,
#: waits for every delivery (one flush per task instead of one per bucket)
ONE_FLUSH_PER_PARTITION = Strategy(
    name="one-flush-per-partition",
    applies=lambda plan: _stateful_without_group_by(plan) and plan.eos is None,
    plain="each state bucket waits for its own deliveries",
    checked_by="tests/engine/test_partition_flush.py",
    requires=("packed-buckets",),
)


def _topic_straight_into_a_sink(plan: "PipelinePlan") -> bool:
    return not plan.collect and any(
        len(root.children) == 1 and root.children[0].kind == "sink" and not root.children[0].children
        for root in plan.roots.values()
    )


#: a topic whose values go straight into a sink that takes raw chunks (``BaseSink.add_raw_json``
#: / ``add_raw_avro``, the lake sink's): a task hands the sink whole chunks of raw JSON or
#: schemaless Avro values, which it decodes into Arrow at once
RAW_SINK_CHUNKS = Strategy(
    name="raw-sink-chunks",
    applies=_topic_straight_into_a_sink,
    plain="each value decoded by the topic's deserializer and added to the sink record by record",
    checked_by="tests/engine/test_raw_avro_sink.py",
)

#: a running query gives back the memory of the Python processes Spark's driver keeps, idle,
#: after planning it (``engine/planner_processes.py``); a later query starts them again
RELEASE_PLANNERS = Strategy(
    name="release-planners",
    applies=lambda plan: True,
    plain="Spark keeps its idle planner processes for the session",
    checked_by="tests/engine/test_planner_processes.py",
)


def _reads_plain_avro(plan: "PipelinePlan") -> bool:
    return any(plan.topics[name].raw_avro_decoder() is not None for name in plan.roots)


#: a topic of plain schemaless Avro values (``Topic.raw_avro_decoder``): a task decodes a chunk
#: of its values into dicts at once (``ArrowAvroDecoder.decode_records``), not one by one
AVRO_CHUNKS = Strategy(
    name="avro-chunks",
    applies=_reads_plain_avro,
    plain="each value decoded by the topic's AvroDeserializer (fastavro)",
    checked_by="tests/engine/test_avro_chunks.py",
)


def _prefixed_plain_avro(plan: "PipelinePlan") -> bool:
    from .columnar_prefix import ColumnarPrefix

    return any(
        plan.topics[name].raw_avro_decoder() is not None and ColumnarPrefix.of(root) is not None
        for name, root in plan.roots.items()
    )


#: a topic of plain schemaless Avro whose first steps are filters and assignments of column
#: expressions (``sdf[sdf["t"] > 25]``, ``sdf["f"] = sdf["t"] * 1.8 + 32``): a task evaluates
#: them over the decoded chunk's columns at once (``engine/columnar_prefix.py``), and builds
#: dicts only for the records that pass
COLUMNAR_PREFIX = Strategy(
    name="columnar-prefix",
    applies=_prefixed_plain_avro,
    plain="each record's dict built, then the filters and assignments run on it one by one",
    checked_by="tests/engine/test_columnar_prefix.py",
    requires=("avro-chunks",),
)


def _one_avro_output(plan: "PipelinePlan") -> bool:
    from ..core.stream.nodes import SinkNode, ToTopicNode

    outputs = [node for node in plan.nodes() if isinstance(node, (ToTopicNode, SinkNode))]
    return (
        not plan.group_nodes
        and len(outputs) == 1
        and isinstance(outputs[0], ToTopicNode)
        and outputs[0].topic.chunk_value_encoder() is not None
    )


#: the plan's one output is a topic of plain schemaless Avro values
#: (``Topic.chunk_value_encoder``): a task keeps the outputs of a chunk of input records and
#: encodes their values at once (``ArrowAvroEncoder``) before producing them, in order
AVRO_OUTPUT_CHUNKS = Strategy(
    name="avro-output-chunks",
    applies=_one_avro_output,
    plain="each output value encoded by the topic's AvroSerializer (fastavro) and produced at once",
    checked_by="tests/engine/test_avro_output_chunks.py",
)

#: a micro-batch over more partitions than cores is read by a task per core, each reading its
#: share of the partitions one after another (``plan_tasks`` in ``engine/_kafka_source.py``)
TASK_PER_CORE = Strategy(
    name="task-per-core",
    applies=lambda plan: True,
    plain="a Spark task per partition when there are more partitions than cores",
    checked_by="tests/engine/test_task_per_core.py",
)

#: a stateful pipeline without a group_by whose checkpoint buckets state by Kafka partition
#: (``PipelinePlan.partition_buckets``, chosen for a new checkpoint when the plan fits, see
#: ``PipelinePlan.fits_partition_buckets``): the source's tasks send a row per offset range,
#: and each state bucket reads its partitions' records itself (``RangeReader`` in
#: ``engine/_kafka_source.py``), so the records cross no shuffle and the stateful stage starts
#: without waiting for the source to read them. Left out, a new checkpoint buckets by key
STATE_READS_SOURCE = Strategy(
    name="state-reads-source",
    applies=lambda plan: _stateful_without_group_by(plan) and plan.partition_buckets,
    plain="the source reads the records and sends them packed to the state buckets (new checkpoints bucket by key)",
    checked_by="tests/engine/test_state_reads_source.py",
    requires=("packed-buckets",),
)

#: a stateful pipeline: each state bucket's blob is compressed (``state/blob_codec.py``) before
#: it goes into Spark's state store, which moves it to the Python worker and back, and writes
#: it, a byte at a time in every micro-batch that touches the bucket. Blobs stored either way
#: are read either way
COMPRESSED_STATE = Strategy(
    name="compressed-state",
    applies=lambda plan: plan.stateful,
    plain="each state bucket's blob stored as it is pickled",
    checked_by="tests/engine/test_compressed_state.py",
)

#: in dependency order (a strategy after those it requires)
STRATEGIES: tuple[Strategy, ...] = (
    FUSED_SOURCE,
    PACKED_BUCKETS,
    GROUP_BY_SHUFFLE,
    FUSED_GROUP_BY,
    COLUMNAR_WINDOWS,
    ONE_FLUSH_PER_PARTITION,
    RAW_SINK_CHUNKS,
    RELEASE_PLANNERS,
    AVRO_CHUNKS,
    COLUMNAR_PREFIX,
    AVRO_OUTPUT_CHUNKS,
    TASK_PER_CORE,
    STATE_READS_SOURCE,
    COMPRESSED_STATE,
)


class Strategies:
    """The fast paths a run may take: all of them unless named in ``plain``."""

    def __init__(self, plain: Iterable[str] = ()) -> None:
        self.plain = frozenset(plain)
        unknown = sorted(self.plain - {s.name for s in STRATEGIES})
        if unknown:
            raise ValueError(f"Unknown fast path(s) {unknown}: known are {sorted(s.name for s in STRATEGIES)}")

    @classmethod
    def from_environment(cls, environ: Optional[Mapping[str, str]] = None) -> "Strategies":
        """All fast paths but those named in ``STREAMSPARK_PLAIN_PATHS`` (comma-separated), for
        comparing a program's speed or outputs with and without them.

        >>> Strategies.from_environment({"STREAMSPARK_PLAIN_PATHS": "fused-source, packed-buckets"})
        Strategies(plain=['fused-source', 'packed-buckets'])
        """
        value = (os.environ if environ is None else environ).get(PLAIN_PATHS_ENV, "")
        return cls(name.strip() for name in value.split(",") if name.strip())

    def enabled(self, strategy: Strategy) -> bool:
        return strategy.name not in self.plain

    def uses(self, strategy: Strategy, plan: "PipelinePlan") -> bool:
        """Whether ``plan`` runs ``strategy``: enabled here and applicable to the plan."""
        return self.enabled(strategy) and strategy.applies(plan)

    def names_for(self, plan: "PipelinePlan") -> frozenset[str]:
        """The strategies ``plan`` takes (what the plan carries to the tasks)."""
        taken: set[str] = set()
        for strategy in STRATEGIES:
            if self.uses(strategy, plan) and all(name in taken for name in strategy.requires):
                taken.add(strategy.name)
        return frozenset(taken)

    def __repr__(self) -> str:
        return f"Strategies(plain={sorted(self.plain)})"
