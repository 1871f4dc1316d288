"""``group_by`` through a repartition topic, as the reference runs it.

A ``group_by`` is normally a Spark shuffle within the query (the ``group-by-shuffle`` fast
path): the state operator then sees every record re-keyed. That cannot run a plan whose state
is also keyed by the message key before the ``group_by`` (a stateful step before it or beside
it, a merge of re-keyed and other records before a stateful step: see
``PipelinePlan.shuffle_refusal``). Such a plan re-keys the reference's way: the branch that
reaches a ``group_by`` ends by writing its records to a repartition topic, keyed by the new key
(:class:`~streamspark.core.stream.nodes.RepartitionNode`), and the steps after the ``group_by``
read that topic as a root of their own. The query reads both topics, so every stateful step
runs in the state operator keyed by the key of the topic it reads, and a record re-keyed in one
micro-batch is processed after the group_by in a later one (with exactly-once, once the
micro-batch that wrote it has committed). Such a plan buckets its state by Kafka partition:
the records of a partition run in offset order, one after another, so they reach the
repartition topic in that order, as in the reference (bucketed by key, the records of different
keys would be written bucket after bucket).

:func:`through_repartition_topics` rewrites a copy of the plan's node graph (the application's
dataframes keep theirs: a later ``sdf.test()`` or run is unchanged); each node keeps its id, so
what the driver keys by node id (its sinks) still finds it.

>>> from streamspark.dataframe import StreamingDataFrame
>>> from streamspark.engine._plan import PipelinePlan
>>> from streamspark.models import Topic
>>> sdf = StreamingDataFrame(Topic("orders"))
>>> sdf = sdf.apply(lambda v, state: v, stateful=True).group_by("customer")
>>> _ = sdf.apply(lambda v, state: v, stateful=True)
>>> plan = PipelinePlan("run", {"orders": sdf.topic}, {"orders": sdf.stream.root()}, {}, bool, bool, bool)
>>> plan.shuffle_refusal() is not None
True
>>> through_repartition_topics(plan, lambda group, sources: Topic(f"repartition__{group.name}"))
['repartition__customer']
>>> sorted(plan.roots), plan.group_nodes, plan.shuffle_refusal()
(['orders', 'repartition__customer'], [], None)
"""

from __future__ import annotations

import copy
from typing import Any, Callable

from ..core.stream import sources_of, upstream_of
from ..core.stream.nodes import GroupByNode, MergeIntoNode, MergeNode, RepartitionNode, RootNode, StreamNode
from ..models.topics.topic import Topic
from .strategies import GROUP_BY_SHUFFLE, Strategies

__all__ = ("needs_repartition_topics", "through_repartition_topics", "copy_graph")


def needs_repartition_topics(plan: Any, strategies: Strategies) -> bool:
    """True when ``plan`` has a ``group_by`` that is not to run as a shuffle: the shuffle
    cannot run it (``plan.shuffle_refusal()``), or ``strategies`` leave the shuffle out."""
    if not plan.group_nodes:
        return False
    return plan.shuffle_refusal() is not None or not strategies.enabled(GROUP_BY_SHUFFLE)


def copy_graph(roots: dict[str, StreamNode]) -> dict[str, StreamNode]:
    """The trees of ``roots`` (and the merges linking them) copied node by node: each copy
    keeps its node's id and settings (functions, topics, sinks, windows are shared)."""
    found: dict[int, StreamNode] = {}
    pending = list(roots.values())
    while pending:
        node = pending.pop()
        if id(node) in found:
            continue
        found[id(node)] = node
        pending.extend(node.children)
        if node.parent is not None:
            pending.append(node.parent)
        if isinstance(node, MergeNode):
            pending.extend(node.merged_from)
        if isinstance(node, MergeIntoNode):
            pending.append(node.target)
    clones = {key: copy.copy(node) for key, node in found.items()}
    for clone in clones.values():
        clone.parent = clones[id(clone.parent)] if clone.parent is not None else None
        clone.children = [clones[id(child)] for child in clone.children]
        if isinstance(clone, MergeNode):
            clone.merged_from = [clones[id(side)] for side in clone.merged_from]
        if isinstance(clone, MergeIntoNode):
            target = clones[id(clone.target)]
            assert isinstance(target, MergeNode)
            clone.target = target
    return {name: clones[id(root)] for name, root in roots.items()}


def through_repartition_topics(plan: Any, topic_for: Callable[[GroupByNode, list[Topic]], Topic]) -> list[str]:
    """Rewrite ``plan`` so that each of its ``group_by`` writes to a repartition topic and the
    steps after it read that topic (see the module); returns the topics' names.

    :param topic_for: the repartition topic of a ``group_by`` node, given the input topics
        whose records reach it (the application registers and creates it). It is asked for
        the ``group_by`` nodes upstream first, so a ``group_by`` fed by another one's
        repartition topic (through a ``concat``) is given that created topic.
    """
    plan.roots = copy_graph(plan.roots)
    plan.topics = dict(plan.topics)
    names = {id(root): name for name, root in plan.roots.items()}
    added: list[str] = []
    for group in _upstream_first([node for node in plan.nodes() if isinstance(node, GroupByNode)]):
        sources = [plan.topics[names[id(root)]] for root in sources_of(group) if id(root) in names]
        topic = topic_for(group, sources)
        parent = group.parent
        assert parent is not None, "a group_by always follows a step or a root"
        leaf = RepartitionNode(topic, group.func)
        leaf.parent = parent
        parent.children[parent.children.index(group)] = leaf
        root = RootNode()
        root.children = group.children
        for child in root.children:
            child.parent = root
        # a merge fed by the group_by (``other.concat(sdf.group_by(...))``, a join with it on
        # the right) is now fed by the repartition topic's root
        for node in plan.nodes():
            if isinstance(node, MergeNode):
                node.merged_from = [root if side is group else side for side in node.merged_from]
        plan.roots[topic.name] = root
        plan.topics[topic.name] = topic
        names[id(root)] = topic.name
        added.append(topic.name)
    plan.repartitioned = bool(added)
    plan.__dict__.pop("time_aligned", None)  # a cached answer about the old graph
    return added


def _upstream_first(groups: list[GroupByNode]) -> list[GroupByNode]:
    """``groups`` ordered so that a ``group_by`` comes after those whose records reach it."""
    ordered: list[GroupByNode] = []
    pending = list(groups)
    while pending:
        for group in pending:
            before = upstream_of(group)
            if not any(other is not group and any(other is node for node in before) for other in pending):
                ordered.append(group)
                pending.remove(group)
                break
        else:  # pragma: no cover - a cycle cannot be built with the dataframe API
            ordered.extend(pending)
            break
    return ordered
