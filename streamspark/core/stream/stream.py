"""Stream nodes (the logical plan) and their compilation into one fused function.

A ``Stream`` is a handle on one node of a tree rooted at an input topic. Each node is one step
the user added (apply, update, filter, transform, a window, an output). Compilation walks the
tree once and nests closures, so a record runs the whole chain of steps as plain Python calls
with no per-step dispatch; branches receive a copy of the value so they cannot see each
other's mutations. The same compiled function serves ``sdf.test()`` and Spark's Python workers.

>>> root = Stream()
>>> leaf = root.add_apply(lambda v: v + 1).add_filter(lambda v: v > 1)
>>> out = []
>>> push = compose(root, collect=lambda v, k, t, h: out.append(v))
>>> push(1, b"k", 0, None); push(0, b"k", 0, None)
>>> out
[2]
"""

from __future__ import annotations

import pickle
from typing import Any, Callable, Iterable, Optional

from ...state.exceptions import StoreAlreadyRegisteredError
from .exceptions import InvalidOperation, InvalidTopology
from .expressions import Expression
from .nodes import (
    ApplyNode,
    BatchedWindow,
    CompileContext,
    Emitter,
    FilterNode,
    GroupByNode,
    JoinStep,
    MergeIntoNode,
    MergeNode,
    PushFn,
    RootNode,
    SinkNode,
    StateProvider,
    StreamNode,
    ToTopicNode,
    TransformNode,
    UpdateNode,
    WindowNode,
    chain_of,
    describe,
    identity,
    returning_function,
)

__all__ = (
    "Stream",
    "StreamNode",
    "compose",
    "describe",
    "Emitter",
    "StateProvider",
    "PushFn",
    "ReturningFn",
    "BatchedWindow",
    "JoinStep",
    "sources_of",
    "upstream_of",
)

#: f(value, key, timestamp_ms, headers) -> (value, key, timestamp_ms, headers)
ReturningFn = Callable[[Any, Any, int, Any], tuple[Any, Any, int, Any]]


class JoinStoreAlreadyRegisteredError(StoreAlreadyRegisteredError, InvalidOperation):
    """Two joins store the records of one dataframe under the same store name (pass ``name=``)."""


#: values no branch can change: branches share them instead of copying
_IMMUTABLE = (int, float, str, bytes, bool, type(None))


def _check_allowed(
    node: StreamNode, filters: bool = True, expands: bool = True, updates: bool = True, transforms: bool = True
) -> None:
    """Raise ``ValueError`` for a step a composition does not allow (as the reference's compose does)."""
    message = node.not_returning
    if message is not None:
        allowed = {"Filter": filters, "Update": updates, "Transform": transforms}[message.split()[0]]
        if not allowed:
            raise ValueError(message)
    if node.expand and not expands:
        raise ValueError("Expand functions are not allowed")


class Stream:
    """A handle on one node of the plan; adding a step returns a handle on the new node.

    Adding two steps to the same handle creates two branches. ``Stream()`` starts a new tree;
    ``Stream(func, parents=[s])`` adds an apply step ``func`` (identity by default) below ``s``.
    Two handles on the same node are equal.

    >>> root = Stream()
    >>> double = root.add_apply(lambda v: v * 2)
    >>> double.compose_returning()(4, b"k", 0, None)
    (8, b'k', 0, None)
    """

    __slots__ = ("node",)
    node: StreamNode

    def __init__(self, func: Optional[Callable[..., Any]] = None, parents: Optional[list["Stream"]] = None) -> None:
        if parents:
            if len(parents) > 1:
                raise InvalidOperation("A stream with several parents (merged streams) is not supported")
            self.node = ApplyNode(func if func is not None else identity).attach(parents[0].node)
        elif func is None:
            self.node = RootNode()
        else:
            self.node = ApplyNode(func)

    @classmethod
    def of(cls, node: StreamNode) -> "Stream":
        """A handle on an existing node."""
        handle = cls.__new__(cls)
        handle.node = node
        return handle

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Stream) and other.node is self.node

    def __hash__(self) -> int:
        return id(self.node)

    def __repr__(self) -> str:
        return f"<Stream {self.node.kind}#{self.node.id} (children={len(self.node.children)})>"

    # --- building ----------------------------------------------------------------------
    def add(self, node: StreamNode) -> "Stream":
        """Add ``node`` (a new step, see ``streamspark.core.stream.nodes``) below this node.

        >>> from streamspark.core.stream.nodes import ApplyNode
        >>> Stream().add(ApplyNode(lambda v, state: v, stream_id="counts")).node.stateful
        True
        """
        return Stream.of(node.attach(self.node))

    def add_apply(self, func: Callable[..., Any], *, expand: bool = False, metadata: bool = False) -> "Stream":
        """The return value of ``func`` becomes the value (each item of it with ``expand``)."""
        return self.add(ApplyNode(func, expand=expand, metadata=metadata))

    def add_update(
        self, func: Callable[..., Any], *, metadata: bool = False, assigns: Optional[tuple[str, Expression]] = None
    ) -> "Stream":
        """``func`` runs for its side effect; the value passes on unchanged (same object).

        :param assigns: ``(column, expression)`` when ``func`` sets ``value[column]`` to what
            ``expression`` computes and does nothing else (see ``UpdateNode.assigns``)."""
        node = UpdateNode(func, metadata=metadata)
        node.assigns = assigns
        return self.add(node)

    def add_filter(
        self, func: Callable[..., Any], *, metadata: bool = False, expression: Optional[Expression] = None
    ) -> "Stream":
        """The record passes on only when ``func`` returns a truthy value.

        :param expression: what ``func`` computes, when it is a column expression (see
            ``FilterNode.expression``)."""
        node = FilterNode(func, metadata=metadata)
        node.expression = expression
        return self.add(node)

    def add_transform(self, func: Callable[..., Any], *, expand: bool = False) -> "Stream":
        """``func(value, key, ts, headers) -> (value, key, ts, headers)`` (an iterable of them with expand)."""
        return self.add(TransformNode(func, expand=expand))

    def add_window(self, processor: Any, emit: str, stream_id: str) -> "Stream":
        """A window step: ``processor.process(value, key, ts, store, want_updates)`` gives
        (updated, expired) ``(key, result)`` lists; ``emit`` picks ``"current"`` or ``"final"``.
        Each result becomes a record with the window start as its timestamp."""
        return self.add(WindowNode(processor, emit, stream_id))

    def add_to_topic(self, topic: Any, key: Optional[Callable[[Any], Any]] = None) -> "Stream":
        return self.add(ToTopicNode(topic, key))

    def add_sink(self, sink: Any) -> "Stream":
        return self.add(SinkNode(sink))

    def add_group_by(
        self, key_func: Callable[[Any], Any], name: str, stream_id: str, serdes: Optional[dict[str, Any]] = None
    ) -> "Stream":
        """Re-key records with ``key_func(value)``; downstream state is scoped by the new key.

        On Spark this is where records are shuffled by their new key, or written to a
        repartition topic (``serdes``: its serializers and deserializers).
        """
        return self.add(GroupByNode(key_func, name, stream_id, serdes))

    def add_returning(self, kind: str, returning: "Stream", func: Optional[Callable[[Any, Any], Any]] = None) -> "Stream":
        """A filter (``kind="filter"``) on the result of the detached chain ``returning`` (from
        :meth:`diff`), or an update calling ``func(value, result)`` (``kind="update"``)."""
        if kind not in ("filter", "update"):
            raise ValueError(f"A returning step is a filter or an update, not {kind!r}")
        chain = chain_of(returning.node)
        for node in chain:
            _check_allowed(node, filters=False, expands=False, updates=False, transforms=False)
        # the engine sees the step as stateful when a step of the chain is
        stream_id = next((n.stream_id for n in chain if n.stream_id), None)
        step = FilterNode if kind == "filter" else UpdateNode
        return self.add(step(func, metadata=True, returning=returning.node, stream_id=stream_id))

    def merge(self, other: "Stream") -> "Stream":
        """A stream fed with the records of both this stream and ``other`` (``sdf.concat``).

        :raises InvalidOperation: when ``other`` is this stream, or when one of them is
            upstream of the other.

        >>> root = Stream()
        >>> left, right = root.add_apply(lambda v: v + 1), root.add_apply(lambda v: v * 10)
        >>> out = []
        >>> merged = left.merge(right).add_apply(lambda v: -v)
        >>> compose(root, collect=lambda v, k, t, h: out.append(v))(1, None, 0, None)
        >>> out
        [-2, -10]
        """
        if other == self:
            raise InvalidOperation("Cannot merge a SDF with itself")
        if other.node in upstream_of(self.node) or self.node in upstream_of(other.node):
            raise InvalidOperation("The target SDF is already present in the topology")
        node = MergeNode([other.node])
        merged = self.add(node)
        other.add(MergeIntoNode(node))
        return merged

    def join(self, other: "Stream", step: JoinStep, stream_id: str) -> "Stream":
        """A stream of the outputs of ``step`` joining this stream (left) with ``other`` (right).

        The join is stateful (its ``stream_id`` names it in errors and makes the engine run it
        per key bucket).

        A right stream that already feeds this one (the same right dataframe joined again, under
        another store name) joins through a new branch of it, so its records reach both joins.

        :raises InvalidOperation: as :meth:`merge`.
        :raises JoinStoreAlreadyRegisteredError: a join upstream of either stream already writes
            one of the stores of ``step``.
        """
        taken = {store for node in self._joins_upstream(other) for store in node.join.stores()}  # type: ignore[union-attr]
        clash = sorted(taken & set(step.stores()))
        if clash:
            stream, name = clash[0]
            raise JoinStoreAlreadyRegisteredError(
                f'A join already stores the records of "{stream}" in the store "{name}": pass a different name= to this join'
            )
        if other != self and any(other.node is n for n in upstream_of(self.node)):
            other = other.add_apply(identity)
        joined = self.merge(other)
        assert isinstance(joined.node, MergeNode)
        joined.node.join = step
        joined.node.stream_id = stream_id
        return joined

    def _joins_upstream(self, other: "Stream") -> list[MergeNode]:
        """The join nodes of the trees of both streams."""
        found: list[MergeNode] = []
        for root in Stream.of(self.node).roots() + Stream.of(other.node).roots():
            for n in Stream.of(root).nodes():
                target = n.target if isinstance(n, MergeIntoNode) else n
                if isinstance(target, MergeNode) and target.join is not None and not any(target is f for f in found):
                    found.append(target)
        return found

    # --- the tree ----------------------------------------------------------------------
    def roots(self) -> list[StreamNode]:
        """The root of this node's tree and of every tree merged into it (see :meth:`merge`)."""
        found: list[StreamNode] = []
        pending = [self.root()]
        while pending:
            root = pending.pop()
            if any(root is r for r in found):
                continue
            found.append(root)
            for node in Stream.of(root).nodes():
                if isinstance(node, MergeNode):
                    pending.extend(Stream.of(n).root() for n in node.merged_from)
        return found

    def root(self) -> StreamNode:
        node = self.node
        while node.parent is not None:
            node = node.parent
        return node

    def nodes(self) -> Iterable[StreamNode]:
        """All nodes of the tree this handle belongs to, depth first."""
        stack = [self.root()]
        while stack:
            node = stack.pop()
            yield node
            stack.extend(reversed(node.children))

    def root_path(self) -> list["Stream"]:
        """This node and its parents up to the root (in that order)."""
        path = []
        node: Optional[StreamNode] = self.node
        while node is not None:
            path.append(Stream.of(node))
            node = node.parent
        return path

    def full_tree(self) -> list["Stream"]:
        """Every node of this tree, each after its parent (depth first from the root)."""
        return [Stream.of(node) for node in self.nodes()]

    def diff(self, other: "Stream") -> "Stream":
        """Detach the steps ``other`` adds below this node and return them as a new chain.

        Used by ``sdf[sdf.apply(f)]`` and ``sdf["x"] = sdf.apply(f)``: the steps of the other
        dataframe stop being a branch of the tree and run inside the filter or column setter
        instead. The returned handle is on the last step of a copy of the chain (its first step
        has no parent); ``other`` keeps pointing at the detached original.

        :raises InvalidOperation: when ``other`` is this same node, when it does not branch off
            this node (another dataframe, or a sibling branch), when a step between them has
            other branches or merges other streams in (``concat``, a join), or when the chain
            was already used this way.

        >>> root = Stream()
        >>> chain = root.diff(root.add_apply(lambda v: v + 1))
        >>> root.node.children, chain.compose_returning()(1, None, 0, None)
        ([], (2, None, 0, None))
        """
        path: list[StreamNode] = []
        found = False
        node: Optional[StreamNode] = other.node
        while node is not None:
            if node is self.node:
                found = True
                break
            if len(node.children) > 1:
                raise InvalidOperation("Cannot assign or filter using a branched SDF")
            if isinstance(node, MergeNode):
                raise InvalidOperation("Cannot assign or filter using the SDF merged with another SDF")
            path.append(node)
            node = node.parent
        if not path:
            raise InvalidOperation("Cannot assign or filter using the same SDF")
        head = path[-1]
        if head.pruned:
            raise InvalidOperation("Cannot use a filtering or column-setter SDF more than once")
        if not found:
            raise InvalidOperation(
                "filtering or column-setter SDF must originate from target SDF; "
                "ex: `sdf[sdf.apply()]`, NOT `sdf[other_sdf.apply()]` "
                "OR `sdf['x'] = sdf.apply()`, NOT `sdf['x'] = other_sdf.apply()`"
            )
        head.pruned = True
        self.node.children.remove(head)
        head.parent = None
        # a copy, so that steps added to ``other`` later do not change what the chain does
        last: Optional[StreamNode] = None
        for step in reversed(path):
            last = step.detached_copy(last)
        assert last is not None
        return Stream.of(last)

    # --- composing ---------------------------------------------------------------------
    def compose(
        self,
        allow_filters: bool = True,
        allow_expands: bool = True,
        allow_updates: bool = True,
        allow_transforms: bool = True,
        sink: Optional[PushFn] = None,
    ) -> dict["Stream", PushFn]:
        """``{root: push(value, key, timestamp, headers)}`` for the tree of this node.

        ``sink`` receives every record that reaches the end of a branch. A step the ``allow_*``
        flags exclude raises ``ValueError``; outputs and stateful steps need :func:`compose`
        (the module function) with an emitter and a state provider.
        """
        roots = self.roots()
        for root in roots:
            for node in Stream.of(root).nodes():
                _check_allowed(node, allow_filters, allow_expands, allow_updates, allow_transforms)
        return {Stream.of(root): compose(root, collect=sink) for root in roots}

    def compose_single(
        self,
        allow_filters: bool = True,
        allow_expands: bool = True,
        allow_updates: bool = True,
        allow_transforms: bool = True,
        sink: Optional[PushFn] = None,
    ) -> PushFn:
        """The ``push`` of :meth:`compose` for the (single) root of this tree."""
        composed = self.compose(allow_filters, allow_expands, allow_updates, allow_transforms, sink)
        if len(composed) != 1:
            raise InvalidTopology(f"Expected a single root Stream, got {len(composed)}")
        return next(iter(composed.values()))

    def compose_returning(self) -> ReturningFn:
        """``f(value, key, timestamp, headers) -> (value, key, timestamp, headers)`` running the
        steps from the root to this node, which must all be apply steps without ``expand``
        (``ValueError`` otherwise)."""
        chain = chain_of(self.node)
        for node in chain:
            _check_allowed(node, filters=False, expands=False, updates=False, transforms=False)
        run = returning_function(chain, None)

        def returning(value: Any, key: Any, timestamp: int, headers: Any) -> tuple[Any, Any, int, Any]:
            return run(value, key, timestamp, headers), key, timestamp, headers

        return returning


def sources_of(node: StreamNode, through_group_by: bool = True) -> list[StreamNode]:
    """The roots (input topics) whose records reach ``node``, through merges and joins.

    Without ``through_group_by``, the search stops at a ``group_by``: what follows it gets
    re-keyed records, whatever topic they came from.
    """
    found: list[StreamNode] = []
    for n in upstream_of(node, through_group_by):
        if n.parent is None and not any(n is f for f in found):
            found.append(n)
    return found


def upstream_of(node: StreamNode, through_group_by: bool = True) -> list[StreamNode]:
    """``node`` and every node whose records reach it (through merges too); without
    ``through_group_by``, the search stops at a ``group_by`` above ``node``."""
    found: list[StreamNode] = []
    pending = [node]
    while pending:
        current: Optional[StreamNode] = pending.pop()
        while current is not None and not any(current is n for n in found):
            found.append(current)
            if isinstance(current, MergeNode):
                pending.extend(current.merged_from)
            if isinstance(current, GroupByNode) and not through_group_by and current is not node:
                break
            current = current.parent
    return found


def _fan_out(pushes: list[PushFn]) -> PushFn:
    """Feed every branch, in order: the first one gets the value itself, the others each a
    copy of it as it was before the first branch ran (one pickle, loaded once per branch).

    As in the reference, a value that cannot be pickled fails at the branching point.
    """
    first, *others = pushes

    def push(v: Any, k: Any, t: int, h: Any) -> None:
        if type(v) in _IMMUTABLE:
            first(v, k, t, h)
            for p in others:
                p(v, k, t, h)
            return
        snapshot = pickle.dumps(v, protocol=pickle.HIGHEST_PROTOCOL)
        first(v, k, t, h)
        for p in others:
            p(pickle.loads(snapshot), k, t, h)

    return push


def compose(
    root: StreamNode | Stream,
    collect: Optional[PushFn] = None,
    emitter: Optional[Emitter] = None,
    states: Optional[StateProvider] = None,
    split_groups: bool = False,
    below: bool = False,
    batched: Optional[list[BatchedWindow]] = None,
    entries: Optional[dict[int, Optional[PushFn]]] = None,
) -> PushFn:
    """Compile the tree under ``root`` into one ``push(value, key, ts, headers)`` function.

    :param collect: called with every record that reaches the end of a branch (a leaf).
    :param emitter: receives records of ``to_topic`` and ``sink`` nodes.
    :param states: gives stateful steps their ``State``.
    :param split_groups: ``group_by`` nodes hand records to ``emitter.to_group`` (for a
        shuffle) instead of continuing; without it they re-key in place (``sdf.test``).
    :param below: compile only what is below ``root`` (the subtree after a ``group_by``,
        whose records arrive already re-keyed).
    :param batched: when given, windows that have a columnar form (and no branch before them)
        buffer their records and are appended here; the caller flushes them after each batch.
    :param entries: ``{node id: None}`` of nodes where records may also enter the tree: each
        is set to the ``push`` that runs that node and what follows it (the same compiled steps
        the tree's ``push`` reaches).
    """
    node = root.node if isinstance(root, Stream) else root
    leaf: PushFn = collect if collect is not None else (lambda v, k, t, h: None)

    # a window computes a batch at a time only on a path without branches: outputs of another
    # branch would otherwise come before the window's instead of between them
    def children(n: StreamNode, alone: bool) -> PushFn:
        if not n.children:
            return leaf
        if len(n.children) == 1:
            return build(n.children[0], alone)
        return _fan_out([build(c, False) for c in n.children])

    # a merge node is compiled once and fed by each of its merged streams
    merges: dict[int, PushFn] = {}
    joins: dict[int, tuple[PushFn, PushFn]] = {}
    plain = CompileContext(emitter=emitter, states=states, split_groups=split_groups)
    with_batches = CompileContext(emitter=emitter, states=states, split_groups=split_groups, batched=batched)

    def join_of(n: MergeNode, join: JoinStep) -> tuple[PushFn, PushFn]:
        pair = joins.get(n.id)
        if pair is None:
            pair = joins[n.id] = join.compile(plain.need_states(n), children(n, False))
        return pair

    def build(n: StreamNode, alone: bool) -> PushFn:
        if isinstance(n, MergeIntoNode):
            n = n.target
            if n.join is not None:
                return join_of(n, n.join)[1]
        if isinstance(n, MergeNode):
            if n.join is not None:
                return join_of(n, n.join)[0]
            push = merges.get(n.id)
            if push is None:
                push = merges[n.id] = children(n, False)
            return push
        if split_groups and isinstance(n, GroupByNode):  # what follows runs after the shuffle
            push = n.compile(leaf, plain)
        else:
            push = n.compile(children(n, alone), with_batches if alone else plain)
        if entries is not None and n.id in entries:
            entries[n.id] = push
        return push

    return children(node, True) if below else build(node, True)
