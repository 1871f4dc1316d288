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

import copy
import itertools
import pickle
import time
from typing import Any, Callable, Iterable, Optional, Protocol

from ...context import _current_message_context
from .exceptions import InvalidOperation, InvalidTopology

__all__ = (
    "Stream", "StreamNode", "compose", "describe", "Emitter", "StateProvider", "PushFn", "ReturningFn",
    "BatchedWindow", "JoinStep", "sources_of",
)

#: push(value, key, timestamp_ms, headers) -> None
PushFn = Callable[[Any, Any, int, Any], None]
#: f(value, key, timestamp_ms, headers) -> (value, key, timestamp_ms, headers)
ReturningFn = Callable[[Any, Any, int, Any], tuple[Any, Any, int, Any]]

_ids = itertools.count()


class StateProvider(Protocol):
    """Gives stateful steps the ``State`` of a message key."""

    def state(self, stream_id: str, key: Any, step: str = ...) -> Any: ...

    def state_getter(self, stream_id: str, step: str = ...) -> Callable[[Any], Any]: ...


class Emitter(Protocol):
    """What compiled output nodes call to send records out of the pipeline."""

    def to_topic(self, topic: Any, value: Any, key: Any, timestamp: int, headers: Any) -> None: ...

    def topic_sender(self, topic: Any) -> Callable[[Any, Any, int, Any], None]:
        """``send(value, key, timestamp, headers)`` to ``topic`` (compiled once per to_topic node)."""
        ...

    def to_sink(self, sink: Any, value: Any, key: Any, timestamp: int, headers: Any) -> None: ...

    def to_group(self, node: "StreamNode", value: Any, key: Any, timestamp: int, headers: Any) -> None: ...


class JoinStep(Protocol):
    """A join of two streams (:meth:`Stream.join`): compiled once per state, it gives what a
    record of each side runs."""

    def compile(self, states: Any, downstream: PushFn) -> tuple[PushFn, PushFn]:
        """``(left_push, right_push)``, sending the join's outputs to ``downstream``."""
        ...

    def stores(self) -> list[tuple[str, str]]:
        """The (stream id, store name) pairs of the state the join writes."""
        ...

    def describe(self) -> str: ...


def _copy_value(value: Any) -> Any:
    """Copy a value for a branch (pickle round-trip is faster than deepcopy for plain data)."""
    if value is None or isinstance(value, (int, float, str, bytes, bool)):
        return value
    try:
        return pickle.loads(pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL))
    except Exception:
        return copy.deepcopy(value)


def _identity(value: Any) -> Any:
    return value


class StreamNode:
    """One step of the plan. ``kind`` is one of: root, apply, update, filter, transform, window,
    group_by, to_topic, sink, merge, merge_into.

    Each node has one parent, so every input topic has its own tree. A merge (``concat``) is a
    ``merge`` node below one of the merged streams, passing records on, and a ``merge_into``
    leaf below the other, whose ``target`` option is that merge node: records reaching it
    continue below the merge node (also across trees, for streams of different topics).
    A join is a merge node with the ``join`` option (a :class:`JoinStep`): records of the
    merge node's own stream run its left side, those reaching the ``merge_into`` leaf its right.

    A filter or update node with the ``returning`` option runs a detached chain of apply steps
    (see :meth:`Stream.diff`) and filters on, or passes to ``func(value, result)``, its result.
    """

    __slots__ = ("id", "kind", "func", "expand", "metadata", "parent", "children", "options", "pruned",
                 "__weakref__")

    def __init__(
        self,
        kind: str,
        func: Optional[Callable[..., Any]] = None,
        parent: Optional["StreamNode"] = None,
        expand: bool = False,
        metadata: bool = False,
        **options: Any,
    ) -> None:
        self.id = next(_ids)
        self.kind = kind
        self.func = func
        self.expand = expand
        self.metadata = metadata
        self.parent = parent
        self.children: list[StreamNode] = []
        self.options = options
        #: cut off its tree by :meth:`Stream.diff` (it cannot be used that way twice)
        self.pruned = False
        if parent is not None:
            parent.children.append(self)

    def __repr__(self) -> str:
        return f"<StreamNode {self.kind}#{self.id}>"


#: the message of a stream step that a returning composition does not allow, by kind
_NOT_RETURNING = {
    "filter": "Filter functions are not allowed",
    "update": "Update functions are not allowed",
    "to_topic": "Update functions are not allowed",
    "sink": "Update functions are not allowed",
    "transform": "Transform functions are not allowed",
    "group_by": "Transform functions are not allowed",
    "window": "Transform functions are not allowed",
}


def _check_allowed(node: StreamNode, filters: bool = True, expands: bool = True, updates: bool = True,
                   transforms: bool = True) -> None:
    """Raise ``ValueError`` for a step a composition does not allow (as the reference's compose does)."""
    message = _NOT_RETURNING.get(node.kind)
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
            self.node = StreamNode("apply", func if func is not None else _identity, parent=parents[0].node)
        elif func is None:
            self.node = StreamNode("root")
        else:
            self.node = StreamNode("apply", func)

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
    def add_step(
        self, kind: str, func: Optional[Callable[..., Any]] = None, *, expand: bool = False, metadata: bool = False,
        **options: Any,
    ) -> "Stream":
        """Add a step of any ``kind`` below this node.

        ``stream_id=<id>`` makes an apply/update/filter step stateful: its function also
        receives the message key's ``State`` as the last argument.
        """
        return Stream.of(StreamNode(kind, func, parent=self.node, expand=expand, metadata=metadata, **options))

    def add_apply(self, func: Callable[..., Any], *, expand: bool = False, metadata: bool = False) -> "Stream":
        """The return value of ``func`` becomes the value (each item of it with ``expand``)."""
        return self.add_step("apply", func, expand=expand, metadata=metadata)

    def add_update(self, func: Callable[..., Any], *, metadata: bool = False) -> "Stream":
        """``func`` runs for its side effect; the value passes on unchanged (same object)."""
        return self.add_step("update", func, metadata=metadata)

    def add_filter(self, func: Callable[..., Any], *, metadata: bool = False) -> "Stream":
        """The record passes on only when ``func`` returns a truthy value."""
        return self.add_step("filter", func, metadata=metadata)

    def add_transform(self, func: Callable[..., Any], *, expand: bool = False) -> "Stream":
        """``func(value, key, ts, headers) -> (value, key, ts, headers)`` (an iterable of them with expand)."""
        return self.add_step("transform", func, expand=expand)

    def add_window(self, processor: Any, emit: str, stream_id: str) -> "Stream":
        """A window step: ``processor.process(value, key, ts, store, want_updates)`` gives
        (updated, expired) ``(key, result)`` lists; ``emit`` picks ``"current"`` or ``"final"``.
        Each result becomes a record with the window start as its timestamp."""
        return self.add_step("window", None, window=processor, emit=emit, stream_id=stream_id)

    def add_to_topic(self, topic: Any, key: Optional[Callable[[Any], Any]] = None) -> "Stream":
        return self.add_step("to_topic", key, topic=topic)

    def add_sink(self, sink: Any) -> "Stream":
        return self.add_step("sink", None, sink=sink)

    def add_group_by(self, key_func: Callable[[Any], Any], name: str, stream_id: str) -> "Stream":
        """Re-key records with ``key_func(value)``; downstream state is scoped by the new key.

        On Spark this is where records are shuffled by their new key.
        """
        return self.add_step("group_by", key_func, group_name=name, group_stream_id=stream_id)

    def add_returning(self, kind: str, returning: "Stream", func: Optional[Callable[[Any, Any], Any]] = None) -> "Stream":
        """A filter (``kind="filter"``) on the result of the detached chain ``returning`` (from
        :meth:`diff`), or an update calling ``func(value, result)`` (``kind="update"``)."""
        if kind not in ("filter", "update"):
            raise ValueError(f"A returning step is a filter or an update, not {kind!r}")
        chain = _chain(returning.node)
        for node in chain:
            _check_allowed(node, filters=False, expands=False, updates=False, transforms=False)
        # the engine sees the step as stateful when a step of the chain is
        stream_id = next((n.options["stream_id"] for n in chain if n.options.get("stream_id")), None)
        return self.add_step(kind, func, metadata=True, returning=returning.node, stream_id=stream_id)

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
        if other.node in _upstream(self.node) or self.node in _upstream(other.node):
            raise InvalidOperation("The target SDF is already present in the topology")
        merged = self.add_step("merge", _identity, merged_from=[other.node])
        other.add_step("merge_into", None, target=merged.node)
        return merged

    def join(self, other: "Stream", step: JoinStep, stream_id: str) -> "Stream":
        """A stream of the outputs of ``step`` joining this stream (left) with ``other`` (right).

        The join is stateful (its ``stream_id`` names it in errors and makes the engine run it
        per key bucket).

        :raises InvalidOperation: as :meth:`merge`, and when a join upstream of either stream
            already writes one of the stores of ``step``.
        """
        taken = {store for node in self._joins_upstream(other) for store in node.options["join"].stores()}
        clash = sorted(taken & set(step.stores()))
        if clash:
            stream, name = clash[0]
            raise InvalidOperation(
                f'A join already stores the records of "{stream}" in the store "{name}": '
                "pass a different name= to this join"
            )
        joined = self.merge(other)
        joined.node.options["join"] = step
        joined.node.options["stream_id"] = stream_id
        return joined

    def _joins_upstream(self, other: "Stream") -> list[StreamNode]:
        """The join nodes of the trees of both streams."""
        found: list[StreamNode] = []
        for root in Stream.of(self.node).roots() + Stream.of(other.node).roots():
            for n in Stream.of(root).nodes():
                target = n.options["target"] if n.kind == "merge_into" else n
                if target.options.get("join") is not None and not any(target is f for f in found):
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
                if node.kind == "merge":
                    pending.extend(Stream.of(n).root() for n in node.options["merged_from"])
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
            other branches, or when the chain was already used this way.

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
            last = StreamNode(step.kind, step.func, parent=last, expand=step.expand, metadata=step.metadata,
                              **step.options)
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
        chain = _chain(self.node)
        for node in chain:
            _check_allowed(node, filters=False, expands=False, updates=False, transforms=False)
        run = _returning(chain, None)

        def returning(value: Any, key: Any, timestamp: int, headers: Any) -> tuple[Any, Any, int, Any]:
            return run(value, key, timestamp, headers), key, timestamp, headers

        return returning


def _chain(last: StreamNode) -> list[StreamNode]:
    """The steps from the top of ``last``'s tree down to ``last`` (a root node left out)."""
    chain = []
    node: Optional[StreamNode] = last
    while node is not None:
        if node.kind != "root":
            chain.append(node)
        node = node.parent
    chain.reverse()
    return chain


def sources_of(node: StreamNode, through_group_by: bool = True) -> list[StreamNode]:
    """The roots (input topics) whose records reach ``node``, through merges and joins.

    Without ``through_group_by``, the search stops at a ``group_by``: what follows it gets
    re-keyed records, whatever topic they came from.
    """
    found: list[StreamNode] = []
    for n in _upstream(node, through_group_by):
        if n.parent is None and not any(n is f for f in found):
            found.append(n)
    return found


def _upstream(node: StreamNode, through_group_by: bool = True) -> list[StreamNode]:
    """``node`` and every node whose records reach it (through merges too)."""
    found: list[StreamNode] = []
    pending = [node]
    while pending:
        current: Optional[StreamNode] = pending.pop()
        while current is not None and not any(current is n for n in found):
            found.append(current)
            if current.kind == "merge":
                pending.extend(current.options["merged_from"])
            if current.kind == "group_by" and not through_group_by and current is not node:
                break
            current = current.parent
    return found


def _returning(chain: list[StreamNode], states: Optional[StateProvider]) -> Callable[[Any, Any, int, Any], Any]:
    """``f(value, key, ts, headers) -> value`` running the apply steps of ``chain`` in order."""
    fns: list[Callable[[Any, Any, int, Any], Any]] = []
    for node in chain:
        if node.options.get("stream_id"):
            fns.append(_stateful(node, states))
        elif node.metadata:
            assert node.func is not None
            fns.append(node.func)
        else:
            fns.append(_with_metadata(node.func))
    if not fns:
        return lambda v, k, t, h: v
    if len(fns) == 1:
        return fns[0]

    def run(v: Any, k: Any, t: int, h: Any) -> Any:
        for f in fns:
            v = f(v, k, t, h)
        return v

    return run


def _with_metadata(func: Optional[Callable[[Any], Any]]) -> Callable[[Any, Any, int, Any], Any]:
    assert func is not None

    def call(v: Any, k: Any, t: int, h: Any) -> Any:
        return func(v)

    return call


def describe(node: StreamNode) -> str:
    """A readable name of a step for error messages, e.g. ``apply(count) in stream "clicks"``."""
    if node.kind == "window":
        name = node.options["window"].name
    elif node.options.get("join") is not None:
        return f'join({node.options["join"].describe()}) [step #{node.id}]'
    elif node.options.get("returning") is not None:
        name = ", ".join(getattr(n.func, "__name__", "?") for n in _chain(node.options["returning"]))
    else:
        name = getattr(node.func, "__name__", type(node.func).__name__)
    where = f' in stream "{node.options["stream_id"]}"' if node.options.get("stream_id") else ""
    return f"{node.kind}({name}){where} [step #{node.id}]"


def _stateful(node: StreamNode, states: Optional[StateProvider]) -> Callable[..., Any]:
    """Wrap a stateful step's function into the metadata signature, adding its ``State``."""
    if states is None:
        raise InvalidTopology(f"{describe(node)} is stateful and needs a state provider to compile")
    func = node.func
    assert func is not None
    state_of = states.state_getter(node.options["stream_id"], describe(node))
    if node.metadata:

        def with_state_meta(v: Any, k: Any, t: int, h: Any) -> Any:
            return func(v, k, t, h, state_of(k))

        return with_state_meta

    def with_state(v: Any, k: Any, t: int, h: Any) -> Any:
        return func(v, state_of(k))

    return with_state


def _compile_returning(node: StreamNode, states: Optional[StateProvider]) -> Callable[..., Any]:
    """The metadata-signature function of a filter/update node with the ``returning`` option."""
    run = _returning(_chain(node.options["returning"]), states)
    if node.kind == "filter":
        return run
    consume = node.func
    assert consume is not None

    def update(v: Any, k: Any, t: int, h: Any) -> Any:
        return consume(v, run(v, k, t, h))

    return update


def _compile_node(
    node: StreamNode,
    downstream: PushFn,
    emitter: Optional[Emitter],
    states: Optional[StateProvider] = None,
    split_groups: bool = False,
    batched: Optional[list["BatchedWindow"]] = None,
) -> PushFn:
    func = node.func
    kind = node.kind
    nxt = downstream
    metadata = node.metadata
    if kind == "window":
        return _compile_window(node, nxt, states, batched)
    if node.options.get("returning") is not None:
        func = _compile_returning(node, states)
        metadata = True
    elif node.options.get("stream_id"):
        func = _stateful(node, states)
        metadata = True
    if kind in ("root", "merge"):
        return nxt
    if kind == "apply":
        if node.expand:
            if metadata:

                def push(v: Any, k: Any, t: int, h: Any) -> None:
                    for item in func(v, k, t, h):  # type: ignore[misc]
                        nxt(item, k, t, h)

            else:

                def push(v: Any, k: Any, t: int, h: Any) -> None:
                    for item in func(v):  # type: ignore[misc]
                        nxt(item, k, t, h)

        elif metadata:

            def push(v: Any, k: Any, t: int, h: Any) -> None:
                nxt(func(v, k, t, h), k, t, h)  # type: ignore[misc]

        else:

            def push(v: Any, k: Any, t: int, h: Any) -> None:
                nxt(func(v), k, t, h)  # type: ignore[misc]

        return push
    if kind == "update":
        if metadata:

            def push(v: Any, k: Any, t: int, h: Any) -> None:
                func(v, k, t, h)  # type: ignore[misc]
                nxt(v, k, t, h)

        else:

            def push(v: Any, k: Any, t: int, h: Any) -> None:
                func(v)  # type: ignore[misc]
                nxt(v, k, t, h)

        return push
    if kind == "filter":
        if metadata:

            def push(v: Any, k: Any, t: int, h: Any) -> None:
                if func(v, k, t, h):  # type: ignore[misc]
                    nxt(v, k, t, h)

        else:

            def push(v: Any, k: Any, t: int, h: Any) -> None:
                if func(v):  # type: ignore[misc]
                    nxt(v, k, t, h)

        return push
    if kind == "transform":
        if node.expand:

            def push(v: Any, k: Any, t: int, h: Any) -> None:
                for item in func(v, k, t, h):  # type: ignore[misc]
                    nxt(*item)

        else:

            def push(v: Any, k: Any, t: int, h: Any) -> None:
                nxt(*func(v, k, t, h))  # type: ignore[misc]

        return push
    if kind == "group_by":
        key_func = func
        if split_groups:
            if emitter is None:
                raise InvalidTopology("group_by() needs an emitter to compile for a shuffle")
            send_group = emitter.to_group

            def push(v: Any, k: Any, t: int, h: Any) -> None:
                send_group(node, v, key_func(v), t, h)  # type: ignore[misc]

        else:

            def push(v: Any, k: Any, t: int, h: Any) -> None:
                nxt(v, key_func(v), t, h)  # type: ignore[misc]

        return push
    if kind == "to_topic":
        topic = node.options["topic"]
        key_fn = func
        if emitter is None:
            raise InvalidTopology("to_topic() needs an emitter to compile")
        send = emitter.topic_sender(topic)
        if key_fn is None:

            def push(v: Any, k: Any, t: int, h: Any) -> None:
                send(v, k, t, h)
                nxt(v, k, t, h)

        else:

            def push(v: Any, k: Any, t: int, h: Any) -> None:
                send(v, key_fn(v), t, h)
                nxt(v, k, t, h)

        return push
    if kind == "sink":
        sink = node.options["sink"]
        if emitter is None:
            raise InvalidTopology("sink() needs an emitter to compile")
        send_sink = emitter.to_sink

        def push(v: Any, k: Any, t: int, h: Any) -> None:
            send_sink(sink, v, k, t, h)
            nxt(v, k, t, h)

        return push
    raise InvalidTopology(f"Unknown stream node kind {kind!r}")


class _ScopedWindows:
    """The window store of one stream: scopes are ``<stream id>/<window name>``."""

    __slots__ = ("states", "prefix")

    def __init__(self, states: Any, stream_id: str) -> None:
        self.states = states
        self.prefix = stream_id + "/"

    def window_data(self, scope: str, key: Any) -> dict[str, Any]:
        return self.states.window_data(self.prefix + scope, key)  # type: ignore[no-any-return]

    def drop_window_data(self, scope: str, key: Any) -> None:
        self.states.drop_window_data(self.prefix + scope, key)

    def window_scope(self, scope: str) -> list[dict[str, Any]]:
        return self.states.window_scope(self.prefix + scope)  # type: ignore[no-any-return]


def _compile_window(node: StreamNode, nxt: PushFn, states: Optional[StateProvider],
                    batched: Optional[list["BatchedWindow"]] = None) -> PushFn:
    import logging

    if states is None:
        raise InvalidTopology(f"{describe(node)} is stateful and needs a state provider to compile")
    processor = node.options["window"]
    process = processor.process
    want_updates = node.options["emit"] == "current"
    store = _ScopedWindows(states, node.options["stream_id"])
    logger = logging.getLogger(__name__)
    idle = processor.idle_ms is not None

    def push(v: Any, k: Any, t: int, h: Any) -> None:
        if k is None:
            logger.warning("Skipping window processing for a message because the key is None")
            return
        updated, expired = process(v, k, t, store, want_updates)
        if idle:
            processor.touch(store.window_data(processor.name, k), k, int(time.time() * 1000))
        for key, result in updated if want_updates else expired:
            nxt(result, key, result["start"], None)

    if idle:
        # closing quiet keys runs outside of any record: the engine calls the tickers
        def tick(now_ms: int) -> None:
            for key, result in processor.close_quiet(store, now_ms):
                nxt(result, key, result["start"], None)

        tickers = getattr(states, "tickers", None)
        if isinstance(tickers, list):
            tickers.append(tick)
    if batched is not None:
        columnar = processor.columnar(node.options["emit"])
        if columnar is not None:
            window = BatchedWindow(columnar, store, push, nxt)
            batched.append(window)
            return window.push
    return push


#: ``replay(ctx, value, key, ts, headers, fn)``: run ``fn(value, key, ts, headers)`` as the
#: record of ``ctx`` (its message context set, its errors handled like the record's own)
Replay = Callable[[Any, Any, Any, int, Any, PushFn], None]


class BatchedWindow:
    """A window step that takes the records of a whole batch before computing (columnar path).

    ``push`` only buffers (skipping ``None`` keys like the general path); the engine calls
    :meth:`flush` once the batch's records went through the steps before the window. The
    outputs then flow downstream record by record, each under the message context of the
    record that produced it, in the order the general path would emit them. A batch the
    columnar computation cannot take runs through the general path (``general``) instead.
    """

    def __init__(self, columnar: Any, store: Any, general: PushFn, nxt: PushFn) -> None:
        import logging

        self.columnar = columnar
        self.store = store
        self.general = general
        self.nxt = nxt
        self.buffer: list[tuple[Any, Any, int, Any, Any]] = []
        #: batches computed columnar / through the general path (for tests and logs)
        self.columnar_batches = 0
        self.general_batches = 0
        self._todo: list[tuple[str, Any]] = []
        self._logger = logging.getLogger(__name__)

    def push(self, v: Any, k: Any, t: int, h: Any) -> None:
        if k is None:
            self._logger.warning("Skipping window processing for a message because the key is None")
            return
        self.buffer.append((v, k, t, h, _current_message_context.get()))

    def flush(self, replay: Replay) -> None:
        records, self.buffer = self.buffer, []
        if not records:
            return
        actions = self.columnar.plan(records, self.store)
        if actions is None:
            self.general_batches += 1
            for v, k, t, h, ctx in records:
                replay(ctx, v, k, t, h, self.general)
            return
        self.columnar_batches += 1
        run = self._run_actions
        for i, todo in actions:
            v, k, t, h, ctx = records[i]
            self._todo = todo
            replay(ctx, v, k, t, h, run)

    def _run_actions(self, v: Any, k: Any, t: int, h: Any) -> None:
        """What the columnar computation decided for one record: late reports, then outputs."""
        nxt = self.nxt
        for kind, payload in self._todo:
            if kind == "emit":
                nxt(payload, k, payload["start"], None)
            else:
                self.columnar.processor.report_late(v, k, t, *payload)


def _fan_out(pushes: list[PushFn]) -> PushFn:
    *firsts, last = pushes

    def push(v: Any, k: Any, t: int, h: Any) -> None:
        for p in firsts:
            p(_copy_value(v), k, t, h)
        last(v, k, t, h)

    return push


def compose(
    root: StreamNode | Stream,
    collect: Optional[PushFn] = None,
    emitter: Optional[Emitter] = None,
    states: Optional[StateProvider] = None,
    split_groups: bool = False,
    below: bool = False,
    batched: Optional[list[BatchedWindow]] = None,
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

    def join_of(n: StreamNode) -> tuple[PushFn, PushFn]:
        pair = joins.get(n.id)
        if pair is None:
            if states is None:
                raise InvalidTopology(f"{describe(n)} is stateful and needs a state provider to compile")
            pair = joins[n.id] = n.options["join"].compile(states, children(n, False))
        return pair

    def build(n: StreamNode, alone: bool) -> PushFn:
        if n.kind == "merge_into":
            n = n.options["target"]
            if n.options.get("join") is not None:
                return join_of(n)[1]
        if n.kind == "merge":
            if n.options.get("join") is not None:
                return join_of(n)[0]
            push = merges.get(n.id)
            if push is None:
                push = merges[n.id] = children(n, False)
            return push
        if split_groups and n.kind == "group_by":  # what follows runs after the shuffle
            return _compile_node(n, leaf, emitter, states, split_groups)
        return _compile_node(n, children(n, alone), emitter, states, split_groups, batched if alone else None)

    return children(node, True) if below else build(node, True)
