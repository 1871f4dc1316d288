"""What the driver ships to Spark tasks: the topics, the plan trees and the callbacks."""

from __future__ import annotations

import dataclasses
import functools
from typing import TYPE_CHECKING, Any, Callable, Optional

from ..core.stream.nodes import GroupByNode, MergeIntoNode, MergeNode, RepartitionNode, SinkNode, StreamNode, WindowNode
from ..models.topics.topic import Topic

if TYPE_CHECKING:
    from ._kafka_source import RangeReader

__all__ = ("PipelinePlan",)


@dataclasses.dataclass
class PipelinePlan:
    """A picklable description of one application's pipeline."""

    run_id: str
    topics: dict[str, Topic]
    roots: dict[str, StreamNode]
    #: the producers' librdkafka settings (credentials: kept out of the repr)
    producer_config: dict[str, Any] = dataclasses.field(repr=False)
    on_consumer_error: Callable[..., bool]
    on_processing_error: Callable[..., bool]
    on_producer_error: Callable[..., bool]
    on_message_processed: Optional[Callable[[str, int, int], None]] = None
    collect: bool = False
    metadata: bool = False
    loglevel: Any = "INFO"
    #: exactly-once settings (``_eos.EosConfig``), None for at-least-once
    eos: Any = None
    #: the names of the fast paths this run takes (``strategies.Strategies.names_for``)
    strategies: frozenset[str] = frozenset()
    #: the end bucket of each shuffle partition (``bucketing.end_buckets``) when the state
    #: buckets leave their producer flush to it (the ``one-flush-per-partition`` strategy)
    end_buckets: tuple[int, ...] = ()
    #: the group key of each state bucket when the checkpoint places them evenly over its
    #: shuffle partitions (``bucketing.checkpoint_state_layout``); empty: the bucket numbers
    bucket_labels: tuple[int, ...] = ()
    #: a group_by writes to a repartition topic (``engine/repartition.py``): state is then
    #: bucketed by Kafka partition number, so that a partition's records run in offset order
    #: and reach the repartition topic in that order, as in the reference, and the records of
    #: a key in every (co-partitioned) topic meet in one bucket
    repartitioned: bool = False
    #: the checkpoint buckets state by Kafka partition number (``bucketing.StateLayout``), as
    #: a new one does when the ``state-reads-source`` fast path fits the plan
    #: (:meth:`fits_partition_buckets`): a bucket then holds whole partitions, so it can read
    #: their records itself
    partition_buckets: bool = False
    #: reads the records of the source's offset ranges inside the state buckets (the
    #: ``state-reads-source`` fast path; ``_kafka_source.RangeReader``, credentials: kept out
    #: of the repr); None: the source sends the records
    range_reader: Optional["RangeReader"] = dataclasses.field(default=None, repr=False)
    #: where ``print`` in a worker goes: the driver's stdout (``callbacks.forward_stdout``); None: the worker's own
    stdout: Optional[Callable[[str], None]] = None

    @property
    def group_nodes(self) -> list[GroupByNode]:
        return [node for node in self.nodes() if isinstance(node, GroupByNode)]

    def validate(self) -> None:
        """Reject what the engine cannot run, with a clear message: a plan whose group_by
        needs a repartition topic (:meth:`shuffle_refusal`) and was not given one
        (``engine/repartition.py``; the application gives it one)."""
        from ..exceptions import InvalidTopology

        refusal = self.shuffle_refusal()
        if refusal is not None:
            raise InvalidTopology(f"{refusal}: its group_by() needs a repartition topic, which this plan was not given")

    def shuffle_refusal(self) -> Optional[str]:
        """Why the plan's group_by cannot be a shuffle within the query (None: it can).

        The shuffle gives the state operator the records re-keyed, so state before it (keyed
        by the message key) and after it (the new key) cannot meet in one query: such a plan
        re-keys through a repartition topic instead, as the reference does.
        """
        from ..core.stream import describe

        if not self.group_nodes:
            return None
        for node in self.nodes():
            if not isinstance(node, MergeNode) or node.parent is None:
                continue
            sides = [node.parent, *node.merged_from]
            if len({_after_group_by(side) for side in sides}) > 1 and _stateful_from(node):
                return (
                    f"{describe(node)} merges a dataframe after a group_by() with one that is not, and "
                    "a join or stateful step follows (within one query, group_by() both dataframes, or "
                    "neither, before merging them)"
                )
        if self._windows_close_by_partition():
            return 'closing_strategy="partition" after a group_by()'
        for root in self.roots.values():
            stack = [(root, False)]
            while stack:
                node, below_group = stack.pop()
                if isinstance(node, GroupByNode) and below_group:
                    return "a group_by() after another group_by()"
                if node.stateful and not below_group:
                    return f"{describe(node)} is stateful and comes before (or beside) a group_by()"
                stack.extend((child, below_group or isinstance(node, GroupByNode)) for child in node.children)
        return None

    def check_copartitioned(self) -> None:
        """Refuse topics whose records meet in one state with different partition counts.

        A join, or a stateful step or window after a ``concat`` of topics, keeps the state of a
        key for the records of all those topics; as the reference requires, their partition
        counts (read from the broker) must be equal. Topics whose broker configuration is not
        known are not checked.

        :raises TopicPartitionsMismatch: naming the topics and their partition counts.
        """
        from ..core.stream import sources_of
        from ..models.topics.exceptions import TopicConfigurationError, TopicPartitionsMismatch

        names = {id(root): name for name, root in self.roots.items()}
        for node in self.nodes():
            if not node.stateful:
                continue
            topics = [self.topics[names[id(root)]] for root in sources_of(node, through_group_by=False) if id(root) in names]
            counts = {}
            for topic in topics:
                try:
                    counts[topic.name] = topic.broker_config.num_partitions
                except TopicConfigurationError:  # not read from a broker: nothing to check
                    continue
            if len(set(counts.values())) > 1:
                found = ", ".join(f'"{name}" ({n} partitions)' for name, n in counts.items())
                raise TopicPartitionsMismatch(
                    f"The underlying topics must have the same number of partitions to use State; got {found}"
                )

    @functools.cached_property
    def time_aligned(self) -> bool:
        """True when records of several topics meet in a merge (``concat`` or a join): a state
        bucket then runs its records in timestamp order across topics."""
        from ..core.stream import sources_of

        return any(isinstance(node, MergeNode) and len(sources_of(node)) > 1 for node in self.nodes())

    @property
    def by_partition(self) -> bool:
        """True when a window closes by partition, a group_by writes to a repartition topic,
        or the checkpoint buckets state by partition: state is then bucketed by Kafka
        partition, not by key."""
        return self.bucket_by_number or self._windows_close_by_partition()

    @property
    def bucket_by_number(self) -> bool:
        """True when a partition's bucket follows its number alone, whatever the topic (a
        repartition topic, or a checkpoint that buckets state by partition): the records of a
        key in co-partitioned topics meet in one bucket."""
        return self.repartitioned or self.partition_buckets

    def _windows_close_by_partition(self) -> bool:
        return any(
            getattr(window.processor, "clock", None) is not None and window.processor.clock.by_partition
            for window in self.window_nodes()
        )

    def fits_partition_buckets(self, parallelism: Optional[int]) -> bool:
        """Whether a new checkpoint of this plan should bucket its state by Kafka partition
        number: a stateful plan without a group_by (a repartition topic's plan included, which
        buckets by partition anyway) or windows closing by partition, whose topics' partition
        counts (read from the broker) are all known, at least ``parallelism`` (the stateful
        stage's tasks: fewer partitions would leave tasks without work, where buckets by key
        spread any partition over them) and shared out evenly enough: the busiest task gets at
        most a quarter more partitions than an even share (4 or 5 partitions on 2 tasks, not 3).

        With no more partitions than buckets, each key's state is then kept per partition,
        as the reference keeps it (a store per topic partition)."""
        from ..models.topics.exceptions import TopicConfigurationError

        if not self.stateful or self.group_nodes or self._windows_close_by_partition() or not parallelism:
            return False
        for name in self.roots:
            try:
                partitions = self.topics[name].broker_config.num_partitions
            except TopicConfigurationError:  # not read from a broker
                return False
            busiest = -(-partitions // parallelism)  # partitions of the busiest task
            if partitions < parallelism or busiest * parallelism * 4 > partitions * 5:
                return False
        return bool(self.roots)

    @property
    def idle_ms(self) -> Optional[int]:
        """The shortest ``close_idle_after`` of the windows (None: no processing-time timers)."""
        found = [window.processor.idle_ms for window in self.window_nodes() if window.processor.idle_ms is not None]
        return min(found) if found else None

    @property
    def stateful(self) -> bool:
        """True when a step needs per-key state (the pipeline then runs per key bucket)."""
        return any(node.stateful for node in self.nodes())

    def nodes(self) -> list[StreamNode]:
        found = []
        stack = list(self.roots.values())
        while stack:
            node = stack.pop()
            found.append(node)
            stack.extend(node.children)
        return found

    def sink_nodes(self) -> list[SinkNode]:
        return [node for node in self.nodes() if isinstance(node, SinkNode)]

    def outputs_per_record(self) -> Optional[int]:
        """The most outputs one input record can give, counting one per branch end it reaches
        (what ``app.run(count=N)`` counts): 1 for a single branch, 2 for a dataframe that
        splits into two branches; None when a step ``expand``s (a record may give any number).
        A window can give more or fewer; a filter fewer. Used for the first record budget of a
        run with ``count``.
        """
        if any(node.expand for node in self.nodes()):
            return None
        return max(1, max((_branch_ends(root) for root in self.roots.values()), default=1))

    def window_nodes(self) -> list[WindowNode]:
        return [node for node in self.nodes() if isinstance(node, WindowNode)]


def _branch_ends(node: StreamNode) -> int:
    """How many branch ends a record entering ``node`` reaches (a merged stream continues
    below its merge node); a branch that ends in a repartition topic gives no output there
    (its records give theirs after it, read back from the topic's own root)."""
    if isinstance(node, MergeIntoNode):
        node = node.target
    if isinstance(node, RepartitionNode):
        return 0
    if not node.children:
        return 1
    return sum(_branch_ends(child) for child in node.children)


def _after_group_by(node: StreamNode) -> bool:
    """True when ``node`` is a group_by or below one (on its own tree)."""
    current: Optional[StreamNode] = node
    while current is not None:
        if isinstance(current, GroupByNode):
            return True
        current = current.parent
    return False


def _stateful_from(node: StreamNode) -> bool:
    """True when ``node`` or a step below it keeps state."""
    stack = [node]
    while stack:
        current = stack.pop()
        if current.stateful:
            return True
        stack.extend(current.children)
    return False
