"""The plan's nodes: one class per kind of step, each compiling itself into a ``push`` function.

A node is one step a user added (an apply, a filter, a window, an output...). Each class holds
its step's settings as typed attributes and turns itself into ``push(value, key, ts, headers)``
given what comes after it (:meth:`StreamNode.compile`). :func:`~streamspark.core.stream.compose`
walks a tree of nodes and nests what they compile; the engine and the application read the
typed attributes (``ToTopicNode.topic``, ``SinkNode.sink``, ``WindowNode.processor``...).

>>> out = []
>>> node = ApplyNode(lambda v: v * 2)
>>> push = node.compile(lambda v, k, t, h: out.append(v), CompileContext())
>>> push(21, b"k", 0, None); out
[42]
"""

from __future__ import annotations

import copy
import itertools
import logging
import time
from dataclasses import dataclass
from typing import Any, Callable, ClassVar, Optional, Protocol

from ...context import current_message_context
from .expressions import Expression
from .exceptions import InvalidTopology

__all__ = (
    "PushFn",
    "StateProvider",
    "Emitter",
    "JoinStep",
    "CompileContext",
    "StreamNode",
    "RootNode",
    "ApplyNode",
    "UpdateNode",
    "FilterNode",
    "TransformNode",
    "WindowNode",
    "GroupByNode",
    "ToTopicNode",
    "RepartitionNode",
    "SinkNode",
    "MergeNode",
    "MergeIntoNode",
    "BatchedWindow",
    "describe",
    "chain_of",
    "returning_function",
    "identity",
)

#: push(value, key, timestamp_ms, headers) -> None
PushFn = Callable[[Any, Any, int, Any], None]

_ids = itertools.count()
logger = logging.getLogger(__name__)


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
    """A join of two streams (``Stream.join``): compiled once per state, it gives what a
    record of each side runs."""

    def compile(self, states: Any, downstream: PushFn) -> tuple[PushFn, PushFn]:
        """``(left_push, right_push)``, sending the join's outputs to ``downstream``."""
        ...

    def stores(self) -> list[tuple[str, str]]:
        """The (stream id, store name) pairs of the state the join writes."""
        ...

    def describe(self) -> str: ...


@dataclass
class CompileContext:
    """What compiling a node may need besides what follows it.

    :param emitter: receives the records of ``to_topic`` and ``sink`` nodes.
    :param states: gives stateful steps their ``State``.
    :param split_groups: ``group_by`` nodes hand records to ``emitter.to_group`` (for a shuffle)
        instead of re-keying in place.
    :param batched: when given, a window with a columnar form buffers its records and is
        appended here (the caller flushes it after each batch); None compiles every window
        record by record.
    """

    emitter: Optional[Emitter] = None
    states: Optional[StateProvider] = None
    split_groups: bool = False
    batched: Optional[list["BatchedWindow"]] = None

    def need_states(self, node: "StreamNode") -> StateProvider:
        if self.states is None:
            raise InvalidTopology(f"{describe(node)} is stateful and needs a state provider to compile")
        return self.states

    def need_emitter(self, what: str) -> Emitter:
        if self.emitter is None:
            raise InvalidTopology(f"{what} needs an emitter to compile")
        return self.emitter


def identity(value: Any) -> Any:
    """The value unchanged (the function of a step that only passes records on)."""
    return value


class StreamNode:
    """One step of the plan, in a tree rooted at an input topic (see the subclasses).

    Each node has one parent, so every input topic has its own tree; merges and joins link
    trees (:class:`MergeNode`, :class:`MergeIntoNode`).
    """

    #: the kind of step, as it reads in error messages and the plan's description
    kind: ClassVar[str] = ""
    #: the error a returning composition (``compose_returning``, a column setter) raises for
    #: this kind of step; None when the step is allowed there
    not_returning: ClassVar[Optional[str]] = None
    #: the stateful steps' state scope (None: stateless)
    stream_id: Optional[str] = None
    #: the step's function, for the kinds that have one
    func: Optional[Callable[..., Any]] = None
    expand: bool = False
    metadata: bool = False

    __slots__ = ("id", "parent", "children", "pruned", "__weakref__")

    def __init__(self) -> None:
        self.id = next(_ids)
        self.parent: Optional[StreamNode] = None
        self.children: list[StreamNode] = []
        #: cut off its tree by ``Stream.diff`` (it cannot be used that way twice)
        self.pruned = False

    def attach(self, parent: Optional["StreamNode"]) -> "StreamNode":
        """Make this node the last child of ``parent`` (or a root with None); returns it."""
        self.parent = parent
        if parent is not None:
            parent.children.append(self)
        return self

    def detached_copy(self, parent: Optional["StreamNode"]) -> "StreamNode":
        """A copy of this step (a new id, no children) below ``parent``."""
        clone = copy.copy(self)
        clone.id = next(_ids)
        clone.children = []
        clone.pruned = False
        return clone.attach(parent)

    @property
    def stateful(self) -> bool:
        return self.stream_id is not None

    def step_name(self) -> str:
        """The name of the step in messages (its function's name by default)."""
        return getattr(self.func, "__name__", type(self.func).__name__)

    def compile(self, downstream: PushFn, ctx: CompileContext) -> PushFn:
        """``push(value, key, ts, headers)`` running this step, then ``downstream``."""
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"<{type(self).__name__} #{self.id}>"


class RootNode(StreamNode):
    """The top of a topic's tree: records enter here."""

    kind = "root"
    __slots__ = ()

    def compile(self, downstream: PushFn, ctx: CompileContext) -> PushFn:
        return downstream


class _FunctionNode(StreamNode):
    """A step calling a user function: ``func(value)``, ``func(value, key, ts, headers)`` with
    ``metadata``, with the key's ``State`` as the last argument when ``stream_id`` is set."""

    __slots__ = ("func", "expand", "metadata", "stream_id")

    def __init__(
        self, func: Callable[..., Any], *, expand: bool = False, metadata: bool = False, stream_id: Optional[str] = None
    ) -> None:
        super().__init__()
        self.func = func
        self.expand = expand
        self.metadata = metadata
        self.stream_id = stream_id

    def call(self, ctx: CompileContext) -> tuple[Callable[..., Any], bool]:
        """The function to call and whether it takes the metadata signature."""
        assert self.func is not None
        if self.stream_id is not None:
            return _with_state(self, ctx.need_states(self)), True
        return self.func, self.metadata


class ApplyNode(_FunctionNode):
    """The function's result becomes the value (each of its items with ``expand``)."""

    kind = "apply"
    __slots__ = ()

    def compile(self, downstream: PushFn, ctx: CompileContext) -> PushFn:
        func, metadata = self.call(ctx)
        nxt = downstream
        if self.expand:
            if metadata:

                def push(v: Any, k: Any, t: int, h: Any) -> None:
                    for item in func(v, k, t, h):
                        nxt(item, k, t, h)

            else:

                def push(v: Any, k: Any, t: int, h: Any) -> None:
                    for item in func(v):
                        nxt(item, k, t, h)

        elif metadata:

            def push(v: Any, k: Any, t: int, h: Any) -> None:
                nxt(func(v, k, t, h), k, t, h)

        else:

            def push(v: Any, k: Any, t: int, h: Any) -> None:
                nxt(func(v), k, t, h)

        return push


class _ReturningNode(_FunctionNode):
    """An update or filter that may run a detached chain of apply steps (``returning``, from
    ``Stream.diff``) and use its result: a filter filters on it, an update calls
    ``func(value, result)``."""

    __slots__ = ("returning",)

    def __init__(
        self,
        func: Optional[Callable[..., Any]],
        *,
        metadata: bool = False,
        stream_id: Optional[str] = None,
        returning: Optional[StreamNode] = None,
    ) -> None:
        super().__init__(func if func is not None else identity, metadata=metadata, stream_id=stream_id)
        if returning is None and func is None:
            raise ValueError(f"A {self.kind} step needs a function")
        self.returning = returning

    def step_name(self) -> str:
        if self.returning is not None:
            return ", ".join(getattr(n.func, "__name__", "?") for n in chain_of(self.returning))
        return super().step_name()

    def call(self, ctx: CompileContext) -> tuple[Callable[..., Any], bool]:
        if self.returning is None:
            return super().call(ctx)
        run = returning_function(chain_of(self.returning), ctx.states)
        if self.kind == "filter":
            return run, True
        consume = self.func
        assert consume is not None

        def update(v: Any, k: Any, t: int, h: Any) -> Any:
            return consume(v, run(v, k, t, h))

        return update, True


class UpdateNode(_ReturningNode):
    """The function runs for its side effect; the value passes on unchanged (same object).

    ``assigns`` is ``(column, expression)`` when the function only sets ``value[column]`` to
    what ``expression`` computes (``sdf["col"] = series`` or a constant), else None.
    """

    kind = "update"
    not_returning = "Update functions are not allowed"
    __slots__ = ("assigns",)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.assigns: Optional[tuple[str, Expression]] = None

    def compile(self, downstream: PushFn, ctx: CompileContext) -> PushFn:
        func, metadata = self.call(ctx)
        nxt = downstream
        if metadata:

            def push(v: Any, k: Any, t: int, h: Any) -> None:
                func(v, k, t, h)
                nxt(v, k, t, h)

        else:

            def push(v: Any, k: Any, t: int, h: Any) -> None:
                func(v)
                nxt(v, k, t, h)

        return push


class FilterNode(_ReturningNode):
    """The record passes on only when the function returns a truthy value.

    ``expression`` is what the function computes when it is a column expression
    (``sdf[series]``), else None.
    """

    kind = "filter"
    not_returning = "Filter functions are not allowed"
    __slots__ = ("expression",)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.expression: Optional[Expression] = None

    def compile(self, downstream: PushFn, ctx: CompileContext) -> PushFn:
        func, metadata = self.call(ctx)
        nxt = downstream
        if metadata:

            def push(v: Any, k: Any, t: int, h: Any) -> None:
                if func(v, k, t, h):
                    nxt(v, k, t, h)

        else:

            def push(v: Any, k: Any, t: int, h: Any) -> None:
                if func(v):
                    nxt(v, k, t, h)

        return push


class TransformNode(StreamNode):
    """``func(value, key, ts, headers) -> (value, key, ts, headers)`` (an iterable of them with
    ``expand``)."""

    kind = "transform"
    not_returning = "Transform functions are not allowed"
    __slots__ = ("func", "expand")

    def __init__(self, func: Callable[..., Any], *, expand: bool = False) -> None:
        super().__init__()
        self.func = func
        self.expand = expand

    def compile(self, downstream: PushFn, ctx: CompileContext) -> PushFn:
        func, nxt = self.func, downstream
        assert func is not None
        if self.expand:

            def push(v: Any, k: Any, t: int, h: Any) -> None:
                for item in func(v, k, t, h):
                    nxt(*item)

        else:

            def push(v: Any, k: Any, t: int, h: Any) -> None:
                nxt(*func(v, k, t, h))

        return push


class GroupByNode(StreamNode):
    """Re-key records with ``func(value)``; downstream state is scoped by the new key. On Spark
    this is where records are shuffled by their new key."""

    kind = "group_by"
    not_returning = "Transform functions are not allowed"
    __slots__ = ("func", "name", "group_stream_id", "serdes")

    def __init__(
        self,
        key_func: Callable[[Any], Any],
        name: str,
        group_stream_id: str,
        serdes: Optional[dict[str, Any]] = None,
    ) -> None:
        super().__init__()
        self.func = key_func
        #: the group's name (the reference's repartition topic name)
        self.name = name
        #: the stream id of the re-keyed stream
        self.group_stream_id = group_stream_id
        #: the repartition topic's ``value_serializer``, ``key_serializer``,
        #: ``value_deserializer`` and ``key_deserializer`` (when one is used: see
        #: ``engine.repartition``); empty: JSON for all four
        self.serdes = dict(serdes or {})

    @property
    def origin_stream_id(self) -> str:
        """The stream id of the dataframe this ``group_by`` was called on."""
        return self.group_stream_id.rsplit(f"--groupby--{self.name}", 1)[0]

    def compile(self, downstream: PushFn, ctx: CompileContext) -> PushFn:
        key_func = self.func
        assert key_func is not None
        if ctx.split_groups:
            send_group = ctx.need_emitter("group_by() for a shuffle").to_group
            node = self

            def to_group(v: Any, k: Any, t: int, h: Any) -> None:
                send_group(node, v, key_func(v), t, h)

            return to_group
        nxt = downstream

        def push(v: Any, k: Any, t: int, h: Any) -> None:
            nxt(v, key_func(v), t, h)

        return push


class ToTopicNode(StreamNode):
    """Produce each record to ``topic`` (with the key ``func(value)`` when given), then pass it on."""

    kind = "to_topic"
    not_returning = "Update functions are not allowed"
    __slots__ = ("func", "topic")

    def __init__(self, topic: Any, key: Optional[Callable[[Any], Any]] = None) -> None:
        super().__init__()
        self.topic = topic
        self.func = key

    def compile(self, downstream: PushFn, ctx: CompileContext) -> PushFn:
        send = ctx.need_emitter("to_topic()").topic_sender(self.topic)
        key_fn, nxt = self.func, downstream
        if key_fn is None:

            def push(v: Any, k: Any, t: int, h: Any) -> None:
                send(v, k, t, h)
                nxt(v, k, t, h)

        else:

            def push(v: Any, k: Any, t: int, h: Any) -> None:
                send(v, key_fn(v), t, h)
                nxt(v, k, t, h)

        return push

    def step_name(self) -> str:
        return str(getattr(self.topic, "name", self.topic))


class RepartitionNode(ToTopicNode):
    """The end of a branch that ``group_by`` re-keys through a repartition topic, as the
    reference does: each record goes to ``topic`` keyed by ``func(value)``, and nothing
    follows here (the steps after the ``group_by`` read the topic, from a root of their own).

    >>> sent = []
    >>> class Out:
    ...     def topic_sender(self, topic):
    ...         return lambda v, k, t, h: sent.append((topic, v, k))
    >>> node = RepartitionNode("repartition__g--orders--customer", lambda v: v["customer"])
    >>> node.compile(lambda *a: sent.append("downstream"), CompileContext(emitter=Out()))({"customer": "c1"}, b"s1", 0, None)
    >>> sent
    [('repartition__g--orders--customer', {'customer': 'c1'}, 'c1')]
    """

    kind = "repartition"
    __slots__ = ()

    def compile(self, downstream: PushFn, ctx: CompileContext) -> PushFn:
        send = ctx.need_emitter("group_by() through a repartition topic").topic_sender(self.topic)
        key_fn = self.func
        assert key_fn is not None

        def push(v: Any, k: Any, t: int, h: Any) -> None:
            send(v, key_fn(v), t, h)

        return push


class SinkNode(StreamNode):
    """Hand each record to ``sink``; the branch then yields ``None`` as its value (a sink is
    terminal: in ``sdf.test()`` and ``app.run(collect=True)`` its branch gives ``None`` with the
    record's key, timestamp and headers, as in Quix Streams)."""

    kind = "sink"
    not_returning = "Update functions are not allowed"
    __slots__ = ("sink",)

    def __init__(self, sink: Any) -> None:
        super().__init__()
        self.sink = sink

    def compile(self, downstream: PushFn, ctx: CompileContext) -> PushFn:
        send_sink = ctx.need_emitter("sink()").to_sink
        sink, nxt = self.sink, downstream

        def push(v: Any, k: Any, t: int, h: Any) -> None:
            send_sink(sink, v, k, t, h)
            nxt(None, k, t, h)

        return push

    def step_name(self) -> str:
        return type(self.sink).__name__


class MergeNode(StreamNode):
    """Records of its own stream and of the streams in ``merged_from`` (through their
    :class:`MergeIntoNode` leaves) continue below it. With ``join``, the node is a join: its
    own stream's records run the join's left side, the merged stream's its right side."""

    kind = "merge"
    __slots__ = ("merged_from", "join", "stream_id")

    def __init__(self, merged_from: list[StreamNode], join: Optional[JoinStep] = None, stream_id: Optional[str] = None) -> None:
        super().__init__()
        self.merged_from = merged_from
        self.join = join
        self.stream_id = stream_id

    def step_name(self) -> str:
        return "merge"

    def compile(self, downstream: PushFn, ctx: CompileContext) -> PushFn:
        return downstream


class MergeIntoNode(StreamNode):
    """The leaf of a merged stream: its records continue below ``target``, the merge node
    (also across trees, for streams of different topics)."""

    kind = "merge_into"
    __slots__ = ("target",)

    def __init__(self, target: MergeNode) -> None:
        super().__init__()
        self.target = target

    def step_name(self) -> str:
        return f"merge #{self.target.id}"

    def compile(self, downstream: PushFn, ctx: CompileContext) -> PushFn:
        raise InvalidTopology("a merge_into leaf is compiled as its merge node (see compose())")


class WindowNode(StreamNode):
    """A window: ``processor.process(value, key, ts, store, want_updates, headers)`` gives (updated,
    expired) ``(key, result)`` lists; ``emit`` is ``"current"`` or ``"final"``. Each result
    becomes a record with the window's start as its timestamp."""

    kind = "window"
    not_returning = "Transform functions are not allowed"
    __slots__ = ("processor", "emit", "stream_id")

    def __init__(self, processor: Any, emit: str, stream_id: str) -> None:
        super().__init__()
        self.processor = processor
        self.emit = emit
        self.stream_id = stream_id

    def step_name(self) -> str:
        return str(self.processor.name)

    def columnar_form(self) -> Any:
        """The window's batch-at-a-time form, or None when it only runs record by record
        (the ``columnar-windows`` strategy)."""
        return self.processor.columnar(self.emit)

    def compile(self, downstream: PushFn, ctx: CompileContext) -> PushFn:
        states = ctx.need_states(self)
        processor, nxt = self.processor, downstream
        process = processor.process
        want_updates = self.emit == "current"
        assert self.stream_id is not None
        store = _ScopedWindows(states, self.stream_id)
        idle = processor.idle_ms is not None

        def push(v: Any, k: Any, t: int, h: Any) -> None:
            if k is None:
                _skip_none_key()
                return
            updated, expired = process(v, k, t, store, want_updates, h)
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
        if ctx.batched is not None:
            columnar = self.columnar_form()
            if columnar is not None:
                window = BatchedWindow(columnar, store, push, nxt)
                ctx.batched.append(window)
                return window.push
        return push


def _skip_none_key() -> None:
    """Log the skip of a record without a key at a window, naming its partition and offset."""
    ctx = current_message_context.get()
    where = f", partition='{ctx.topic}[{ctx.partition}]' offset='{ctx.offset}'." if ctx is not None else "."
    logger.warning("Skipping window processing for a message because the key is None%s", where)


def describe(node: StreamNode) -> str:
    """A readable name of a step for error messages, e.g. ``apply(count) in stream "clicks"``."""
    if isinstance(node, MergeNode) and node.join is not None:
        return f"join({node.join.describe()}) [step #{node.id}]"
    where = f' in stream "{node.stream_id}"' if node.stream_id else ""
    return f"{node.kind}({node.step_name()}){where} [step #{node.id}]"


def chain_of(last: StreamNode) -> list[StreamNode]:
    """The steps from the top of ``last``'s tree down to ``last`` (a root node left out)."""
    chain = []
    node: Optional[StreamNode] = last
    while node is not None:
        if not isinstance(node, RootNode):
            chain.append(node)
        node = node.parent
    chain.reverse()
    return chain


def returning_function(chain: list[StreamNode], states: Optional[StateProvider]) -> Callable[[Any, Any, int, Any], Any]:
    """``f(value, key, ts, headers) -> value`` running the apply steps of ``chain`` in order."""
    ctx = CompileContext(states=states)
    fns: list[Callable[[Any, Any, int, Any], Any]] = []
    for node in chain:
        assert isinstance(node, _FunctionNode)
        func, metadata = node.call(ctx)
        fns.append(func if metadata else _metadata_signature(func))
    if not fns:
        return lambda v, k, t, h: v
    if len(fns) == 1:
        return fns[0]

    def run(v: Any, k: Any, t: int, h: Any) -> Any:
        for f in fns:
            v = f(v, k, t, h)
        return v

    return run


def _metadata_signature(func: Callable[[Any], Any]) -> Callable[[Any, Any, int, Any], Any]:
    def call(v: Any, k: Any, t: int, h: Any) -> Any:
        return func(v)

    return call


def _with_state(node: _FunctionNode, states: StateProvider) -> Callable[..., Any]:
    """A stateful step's function in the metadata signature, given the key's ``State``."""
    func = node.func
    assert func is not None and node.stream_id is not None
    state_of = states.state_getter(node.stream_id, describe(node))
    if node.metadata:

        def with_state_meta(v: Any, k: Any, t: int, h: Any) -> Any:
            return func(v, k, t, h, state_of(k))

        return with_state_meta

    def with_state(v: Any, k: Any, t: int, h: Any) -> Any:
        return func(v, state_of(k))

    return with_state


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
        self.columnar = columnar
        self.store = store
        self.general = general
        self.nxt = nxt
        self.buffer: list[tuple[Any, Any, int, Any, Any]] = []
        #: batches computed columnar / through the general path (for tests and logs)
        self.columnar_batches = 0
        self.general_batches = 0
        self._todo: list[tuple[str, Any]] = []

    def push(self, v: Any, k: Any, t: int, h: Any) -> None:
        if k is None:
            _skip_none_key()
            return
        self.buffer.append((v, k, t, h, current_message_context.get()))

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
