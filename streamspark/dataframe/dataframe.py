"""``StreamingDataFrame``: the lazy, declarative pipeline over a topic's messages.

>>> from streamspark.models import Topic
>>> sdf = StreamingDataFrame(Topic("readings"))
>>> sdf = sdf[sdf["temp"] > 30]
>>> sdf["temp_f"] = sdf["temp"] * 9 / 5 + 32
>>> sdf.test({"temp": 40})
[({'temp': 40, 'temp_f': 104.0}, b'key', 0, None)]
"""

from __future__ import annotations

import contextvars
import functools
import logging
import operator
import pprint
import warnings
import weakref
from datetime import timedelta
from typing import TYPE_CHECKING, Any, Callable, List, Literal, Mapping, NoReturn, Optional, Union

from ..context import set_message_context
from ..core.stream import JoinStep, Stream, StreamNode, compose
from ..core.stream.expressions import Constant
from ..core.stream.nodes import ApplyNode, FilterNode, UpdateNode
from ..models.messagecontext import MessageContext
from ..models.topics.topic import Topic
from ..models.types import Headers, HeadersTuples
from ..sinks.base.sink import BaseSink
from ..state.store import KeyedStateStore
from ._table import DEFAULT_LIVE, DEFAULT_LIVE_SLOWDOWN, LiveSettings, TablePrinter
from .exceptions import GroupByDuplicate, GroupByNestingLimit, InvalidOperation
from .joins.lookups.base import BaseField, BaseLookup
from .series import StreamingSeries, series_expression, value_function

if TYPE_CHECKING:
    from .joins.base import OnOverlap
    from .joins.join_asof import AsOfJoinHow
    from .joins.join_interval import IntervalJoinHow
    from .windows.definitions import (
        HoppingCountWindowDefinition,
        HoppingTimeWindowDefinition,
        SessionWindowDefinition,
        SlidingCountWindowDefinition,
        SlidingTimeWindowDefinition,
        TumblingCountWindowDefinition,
        TumblingTimeWindowDefinition,
    )

__all__ = ("StreamingDataFrame",)

logger = logging.getLogger(__name__)


class _TestEmitter:
    """Serializes what ``to_topic`` would produce, so ``sdf.test`` catches unserializable keys/values."""

    def __init__(self) -> None:
        self.produced: list[tuple[str, Any, Any, int, Headers]] = []

    def to_topic(self, topic: Topic, value: Any, key: Any, timestamp: int, headers: Headers) -> None:
        msg = topic.serialize(key=key, value=value, headers=headers, timestamp_ms=timestamp)
        self.produced.append((topic.name, msg.key, msg.value, timestamp, headers))

    def topic_sender(self, topic: Topic) -> Callable[[Any, Any, int, Headers], None]:
        return functools.partial(self.to_topic, topic)

    def to_group(self, node: StreamNode, value: Any, key: Any, timestamp: int, headers: Headers) -> None:
        raise AssertionError("sdf.test() re-keys group_by() in place; nothing is shuffled")

    def to_sink(self, sink: BaseSink, value: Any, key: Any, timestamp: int, headers: Headers) -> None:
        ctx = _current_ctx.get()
        sink.add(value, key, timestamp, headers, ctx.topic, ctx.partition, ctx.offset)


_current_ctx: contextvars.ContextVar[MessageContext] = contextvars.ContextVar("_sdf_test_ctx")
#: in-memory state of ``sdf.test()`` per dataframe tree: it persists across ``test()`` calls
_test_states: "weakref.WeakKeyDictionary[StreamNode, KeyedStateStore]" = weakref.WeakKeyDictionary()
#: stream ids made by ``group_by`` per dataframe tree (a group_by of these is nested)
_group_origins: "weakref.WeakKeyDictionary[StreamNode, set[str]]" = weakref.WeakKeyDictionary()
#: the ``print_table`` live settings shared by the tables of a dataframe tree
_live_settings: "weakref.WeakKeyDictionary[StreamNode, LiveSettings]" = weakref.WeakKeyDictionary()


class StreamingDataFrame:
    """A pipeline over the messages of one topic, built step by step and run by Spark.

    Steps that return a new dataframe (``apply``, ``filter``, ``sdf[...]``) leave the
    original untouched: calling two of them on the same dataframe creates two branches,
    each fed with every record. Steps marked *in-place* (``update``, ``to_topic``,
    ``fill``, ``drop``, ``print``, ``sdf["col"] = ...``) extend this dataframe and return it.

    Build it with ``app.dataframe(topic)``.
    """

    def __init__(
        self,
        topic: Optional[Topic] = None,
        *,
        stream: Optional[Stream] = None,
        registry: Any = None,
        stream_id: Optional[str] = None,
        sources: Optional[dict[str, StreamNode]] = None,
    ) -> None:
        self._topic = topic
        self._stream = stream if stream is not None else Stream()
        self._registry = registry
        self._stream_id = stream_id or (topic.name if topic is not None else "stream")
        #: the root of each input topic's tree feeding this dataframe (several after ``concat``)
        self._sources = sources if sources is not None else {topic.name if topic is not None else "test": self._stream.root()}
        #: the input topics (several after ``concat`` and joins), in the order they joined
        self._topics: list[Topic] = [topic] if topic is not None else []

    # --- identity --------------------------------------------------------------------
    def register_store(self, store_type: Optional[Any] = None) -> None:
        """Does nothing: Spark's state store keeps the state of this stream.

        Every stateful step (``apply/update/filter(..., stateful=True)``, windows) keeps its
        per-key state in Spark's state store automatically, so there is no store to register
        and no store type to pick. A warning is logged once per process.

        >>> from streamspark.models import Topic
        >>> StreamingDataFrame(Topic("t")).register_store() is None
        True
        """
        global _register_store_warned
        if not _register_store_warned:
            _register_store_warned = True
            logger.warning(
                "StreamingDataFrame.register_store() does nothing: the state of stateful steps and windows "
                "is kept per key in Spark's state store automatically (store_type=%r is ignored)",
                store_type,
            )

    @property
    def topic(self) -> Optional[Topic]:
        return self._topic

    @property
    def topics(self) -> list[Topic]:
        """The input topics of this dataframe (several after ``concat`` or a join).

        >>> from streamspark.models import Topic
        >>> [t.name for t in StreamingDataFrame(Topic("a")).concat(StreamingDataFrame(Topic("b"))).topics]
        ['a', 'b']
        """
        return list(self._topics)

    @property
    def stream(self) -> Stream:
        return self._stream

    @property
    def stream_id(self) -> str:
        """Prefix of the state stores of this stream (the topic name by default)."""
        return self._stream_id

    def __repr__(self) -> str:
        return f"<StreamingDataFrame stream_id={self._stream_id!r} node={self._stream.node!r}>"

    def _derive(self, stream: Stream, stream_id: Optional[str] = None) -> "StreamingDataFrame":
        derived = StreamingDataFrame(
            self._topic, stream=stream, registry=self._registry, stream_id=stream_id or self._stream_id, sources=self._sources
        )
        derived._topics = self._topics
        return derived

    def _in_place(self, stream: Stream) -> "StreamingDataFrame":
        self._stream = stream
        return self

    def _state_scope(self, stateful: bool) -> Optional[str]:
        return self._stream_id if stateful else None

    # --- transformations ---------------------------------------------------------------
    def apply(
        self,
        func: Callable[..., Any],
        *,
        stateful: bool = False,
        expand: bool = False,
        metadata: bool = False,
    ) -> "StreamingDataFrame":
        """Replace the value with ``func(value)`` (``func(value, key, timestamp, headers)`` with metadata).

        With ``expand=True`` each item of the returned iterable becomes its own record; a
        non-iterable result raises ``TypeError``.

        >>> from streamspark.models import Topic
        >>> StreamingDataFrame(Topic("t")).apply(lambda v: [v, v], expand=True).test(1)
        [(1, b'key', 0, None), (1, b'key', 0, None)]
        """
        _require_callable("apply", func)
        return self._derive(
            self._stream.add(ApplyNode(func, expand=expand, metadata=metadata, stream_id=self._state_scope(stateful)))
        )

    def update(self, func: Callable[..., Any], *, stateful: bool = False, metadata: bool = False) -> "StreamingDataFrame":
        """Call ``func`` for a side effect or an in-place mutation; the value passes on (in-place).

        >>> from streamspark.models import Topic
        >>> sdf = StreamingDataFrame(Topic("t"))
        >>> sdf.update(lambda v: v.append(2)).test([1])
        [([1, 2], b'key', 0, None)]
        """
        _require_callable("update", func)
        return self._in_place(self._stream.add(UpdateNode(func, metadata=metadata, stream_id=self._state_scope(stateful))))

    def filter(self, func: Callable[..., Any], *, stateful: bool = False, metadata: bool = False) -> "StreamingDataFrame":
        """Keep records for which ``func`` returns a truthy value.

        >>> from streamspark.models import Topic
        >>> StreamingDataFrame(Topic("t")).filter(lambda v: v > 1).test(1)
        []
        """
        _require_callable("filter", func)
        return self._derive(self._stream.add(FilterNode(func, metadata=metadata, stream_id=self._state_scope(stateful))))

    def contains(self, keys: Union[str, List[str]]) -> StreamingSeries:
        """A series that is True when **all** ``keys`` are present in the value.

        ``keys`` other than a string is iterated anew for each record, as the reference does:
        keys that are not iterable (``sdf.contains(5)``) raise ``TypeError`` when a record is
        processed, not here.
        """
        names = [keys] if isinstance(keys, str) else keys

        def has_all(v: Any, k: Any, t: int, h: Headers) -> bool:
            return all(name in v for name in names)

        return StreamingSeries.from_apply_callback(has_all, sdf_id=id(self))

    def fill(self, *columns: str, **mapping: Any) -> "StreamingDataFrame":
        """Set missing or None columns to None (positional names) or to a constant (keywords); in-place.

        Values that are not dicts pass unchanged.

        >>> from streamspark.models import Topic
        >>> StreamingDataFrame(Topic("t")).fill("x", y=2).test({"y": None})
        [({'y': 2, 'x': None}, b'key', 0, None)]
        """
        defaults = {**{c: None for c in columns}, **mapping}
        if not defaults:
            raise ValueError("No columns or mapping provided to fill().")

        def _fill(value: Any) -> None:
            if not isinstance(value, dict):
                return
            for col, default in defaults.items():
                if value.get(col) is None:
                    value[col] = default

        return self._in_place(self._stream.add_update(_fill))

    def drop(self, columns: Union[str, List[str]], errors: Literal["ignore", "raise"] = "raise") -> "StreamingDataFrame":
        """Remove columns from the value (which must support ``del``, like a dict); in-place.

        Missing columns raise ``KeyError`` unless ``errors="ignore"``; an empty list does nothing.
        """
        if isinstance(columns, list):
            if not columns:
                return self
            if not all(isinstance(c, str) for c in columns):
                raise TypeError("column list must contain strings only")
        elif isinstance(columns, str):
            columns = [columns]
        else:
            raise TypeError(f"Expected a string or a list of strings, not {type(columns)}")
        cols = columns  # used as given (not copied), as the reference does
        ignore = errors == "ignore"

        def _drop(value: Any) -> None:
            for c in cols:
                try:
                    del value[c]
                except KeyError:
                    if not ignore:
                        raise

        return self._in_place(self._stream.add_update(_drop))

    def set_timestamp(self, func: Callable[[Any, Any, int, Headers], int]) -> "StreamingDataFrame":
        """Set the record timestamp (ms) from ``func(value, key, timestamp, headers)``; used downstream and when producing."""

        def _ts(v: Any, k: Any, t: int, h: Headers) -> tuple[Any, Any, int, Headers]:
            return v, k, func(v, k, t, h), h

        return self._derive(self._stream.add_transform(_ts))

    def set_headers(self, func: Callable[[Any, Any, int, HeadersTuples], HeadersTuples]) -> "StreamingDataFrame":
        """Replace the headers with ``func(value, key, timestamp, headers)`` (a list of ``(name, value)``).

        ``func`` receives a copy of the current headers as a list (empty when there are none).
        """

        def _hdr(v: Any, k: Any, t: int, h: Headers) -> tuple[Any, Any, int, Headers]:
            return v, k, t, func(v, k, t, list(h) if h else [])

        return self._derive(self._stream.add_transform(_hdr))

    def print(self, pretty: bool = True, metadata: bool = False) -> "StreamingDataFrame":
        """Print ``{"value": ...}`` for each record (with ``"key"``, ``"timestamp"`` and
        ``"headers"`` too with ``metadata``) to stdout; in-place.

        ``pretty`` formats it with ``pprint`` (indent 2, keys in their order); otherwise it is
        printed as ``print()`` would.

        >>> from streamspark.models import Topic
        >>> _ = StreamingDataFrame(Topic("t")).print(pretty=False).test(1)
        {'value': 1}
        """
        show: Callable[[Any], str] = functools.partial(pprint.pformat, indent=2, sort_dicts=False) if pretty else str

        def _print(v: Any, k: Any, t: int, h: Headers) -> None:
            shown = {"value": v, "key": k, "timestamp": t, "headers": h} if metadata else {"value": v}
            print(show(shown), flush=True)

        return self._in_place(self._stream.add_update(_print, metadata=True))

    def print_table(
        self,
        size: int = 5,
        title: Optional[str] = None,
        metadata: bool = True,
        timeout: float = 5.0,
        live: bool = DEFAULT_LIVE,
        live_slowdown: float = DEFAULT_LIVE_SLOWDOWN,
        columns: Optional[List[str]] = None,
        column_widths: Optional[dict[str, int]] = None,
    ) -> "StreamingDataFrame":
        """Print the most recent records as a table (in-place; experimental).

        Rows hold ``_key`` and ``_timestamp`` first (with ``metadata``), then the value's
        columns (a value that is not a dict is the column ``"0"``); ``columns`` picks the value
        columns to show (``[]``: metadata only), missing values are empty cells and
        ``column_widths`` fixes widths (longer text ends with "…").

        In a terminal with ``live``, every record reprints the pipeline's tables in place, then
        waits ``live_slowdown`` seconds; the last ``live``/``live_slowdown`` given to any
        ``print_table`` of the pipeline applies to all. Otherwise (output redirected, and in
        Spark's workers, where each worker prints its own table) a table is printed when it
        holds ``size`` rows or ``timeout`` seconds after the previous one.
        """
        settings = _live_settings.get(self._stream.root())
        if settings is None:
            settings = _live_settings[self._stream.root()] = LiveSettings()
        settings.configure(live, live_slowdown)
        if columns is not None:
            if metadata:
                columns = ["_key", "_timestamp", *columns]
            elif not columns:
                warnings.warn(f"`columns` is an empty list and `metadata` is False. Table `{title}` will be empty.", stacklevel=2)
        printer = TablePrinter(
            size=size,
            title=title,
            metadata=metadata,
            timeout=timeout,
            columns=columns,
            column_widths=column_widths,
            settings=settings,
        )
        return self._in_place(self._stream.add_update(printer.add, metadata=True))

    # --- windows -----------------------------------------------------------------------
    def tumbling_window(
        self,
        duration_ms: Union[int, "timedelta"],
        grace_ms: Union[int, "timedelta"] = 0,
        name: Optional[str] = None,
        on_late: Optional[Callable[..., Optional[bool]]] = None,
        *,
        before_update: Optional[Callable[[Any, Any, Any, int, Any], bool]] = None,
        after_update: Optional[Callable[[Any, Any, Any, int, Any], bool]] = None,
    ) -> "TumblingTimeWindowDefinition":
        """Fixed, non-overlapping event-time windows ``[start, start + duration)`` aligned to the epoch.

        Windows are per message key (``None`` keys are skipped); a result's timestamp is its
        window start; a window closes when the key's event time reaches ``end + grace_ms``
        (``closing_strategy="partition"``: the partition's). ``on_late(value, key, timestamp_ms,
        late_by_ms, start, end, name, topic, partition, offset)`` returns True to log a late record.

        ``before_update(aggregated, value, key, timestamp, headers)`` and ``after_update(...)``
        close a window early when they return True: ``.final()`` emits it at once, without
        the record (``before_update``, which sees the state before the record) or with it
        (``after_update``), and the window's next record starts it afresh. ``.current()``
        emits no update for a window closed this way.

        >>> from streamspark.models import Topic
        >>> sdf = StreamingDataFrame(Topic("t")).tumbling_window(10).count().current()
        >>> sdf.test(1, timestamp=12)
        [({'start': 10, 'end': 20, 'value': 1}, b'key', 10, None)]
        >>> full = StreamingDataFrame(Topic("t")).tumbling_window(100, after_update=lambda agg, *_: agg >= 2)
        >>> sdf = full.count().final()
        >>> [sdf.test(v, timestamp=t) for v, t in ((1, 1), (2, 2))]
        [[], [({'start': 0, 'end': 100, 'value': 2}, b'key', 0, None)]]
        """
        from .windows.definitions import TumblingTimeWindowDefinition

        return TumblingTimeWindowDefinition(
            self, duration_ms, grace_ms, name, on_late, before_update=before_update, after_update=after_update
        )

    def hopping_window(
        self,
        duration_ms: Union[int, "timedelta"],
        step_ms: Union[int, "timedelta"],
        grace_ms: Union[int, "timedelta"] = 0,
        name: Optional[str] = None,
        on_late: Optional[Callable[..., Optional[bool]]] = None,
        *,
        before_update: Optional[Callable[[Any, Any, Any, int, Any], bool]] = None,
        after_update: Optional[Callable[[Any, Any, Any, int, Any], bool]] = None,
    ) -> "HoppingTimeWindowDefinition":
        """Overlapping event-time windows of ``duration_ms`` starting every ``step_ms`` (see
        :meth:`tumbling_window`, also for ``before_update`` and ``after_update``, which run for
        each window of the record)."""
        from .windows.definitions import HoppingTimeWindowDefinition

        return HoppingTimeWindowDefinition(
            self,
            duration_ms,
            grace_ms,
            name,
            on_late,
            step_ms=step_ms,
            before_update=before_update,
            after_update=after_update,
        )

    def sliding_window(
        self,
        duration_ms: Union[int, "timedelta"],
        grace_ms: Union[int, "timedelta"] = 0,
        name: Optional[str] = None,
        on_late: Optional[Callable[..., Optional[bool]]] = None,
    ) -> "SlidingTimeWindowDefinition":
        """One window ``[t - duration, t]`` (inclusive at both ends) per distinct event time ``t`` of a key."""
        from .windows.definitions import SlidingTimeWindowDefinition

        return SlidingTimeWindowDefinition(self, duration_ms, grace_ms, name, on_late)

    def tumbling_count_window(self, count: int, name: Optional[str] = None) -> "TumblingCountWindowDefinition":
        """Windows of ``count`` consecutive records of a key; start/end are their min/max timestamps."""
        from .windows.definitions import TumblingCountWindowDefinition

        return TumblingCountWindowDefinition(self, count, None, name)

    def hopping_count_window(self, count: int, step: int, name: Optional[str] = None) -> "HoppingCountWindowDefinition":
        """Windows of ``count`` records of a key, a new one every ``step`` records."""
        from .windows.definitions import HoppingCountWindowDefinition

        return HoppingCountWindowDefinition(self, count, step, name)

    def sliding_count_window(self, count: int, name: Optional[str] = None) -> "SlidingCountWindowDefinition":
        """Windows of ``count`` records of a key, a new one every record."""
        from .windows.definitions import SlidingCountWindowDefinition

        return SlidingCountWindowDefinition(self, count, 1, name)

    def session_window(
        self,
        inactivity_gap_ms: Union[int, "timedelta"],
        grace_ms: Union[int, "timedelta"] = 0,
        name: Optional[str] = None,
        on_late: Optional[Callable[..., Optional[bool]]] = None,
    ) -> "SessionWindowDefinition":
        """Sessions of a key: records at most ``inactivity_gap_ms`` apart belong together.

        A session is ``[start, end)`` with ``end`` = its last record's timestamp + 1; a record
        bridging two sessions merges them. A record is late when its timestamp is below
        ``latest - inactivity_gap_ms - grace_ms`` (``latest``: the key's latest event time), and
        a session closes once ``latest`` reaches ``end + 2 * inactivity_gap_ms + grace_ms``.

        >>> from streamspark.models import Topic
        >>> sdf = StreamingDataFrame(Topic("t")).session_window(10).count().final()
        >>> [sdf.test(1, timestamp=t) for t in (0, 5, 30)]
        [[], [], [({'start': 0, 'end': 6, 'value': 2}, b'key', 0, None)]]
        """
        from .windows.definitions import SessionWindowDefinition

        return SessionWindowDefinition(self, inactivity_gap_ms, grace_ms, name, on_late)

    def group_by(
        self,
        key: Union[str, Callable[[Any], Any]],
        name: Optional[str] = None,
        value_deserializer: Any = "json",
        key_deserializer: Any = "json",
        value_serializer: Any = "json",
        key_serializer: Any = "json",
    ) -> "StreamingDataFrame":
        """Re-key records by a column or ``key(value)``; later state and outputs use the new key.

        On Spark the records are shuffled by their new key within the query. Where a shuffle
        cannot keep the state apart (a stateful step before the ``group_by`` or beside it,
        a merge of re-keyed and other records before a stateful step), the records go
        through a repartition topic as in the reference,
        ``repartition__{consumer_group}--{stream_id}--{name}``, with the topic's partitions,
        written with ``value_serializer``/``key_serializer`` and read back with the
        deserializers. ``name`` is required for a callable and names the operation (the
        column by default).

        Several ``group_by`` may branch from one stream if their names differ
        (``GroupByDuplicate`` otherwise); a ``group_by`` of a dataframe that a ``group_by``
        made raises ``GroupByNestingLimit``.

        >>> from streamspark.models import Topic
        >>> sdf = StreamingDataFrame(Topic("orders")).group_by("customer")
        >>> sdf.test({"customer": "c1"}, key=b"store-7")
        [({'customer': 'c1'}, 'c1', 0, None)]
        """
        if not key:
            raise ValueError('Parameter "key" cannot be empty')
        op = name or (key if isinstance(key, str) else None)
        if not op:
            raise ValueError('group_by requires "name" parameter when "key" is a function')
        key_func: Callable[[Any], Any]
        if isinstance(key, str):
            key_func = operator.itemgetter(key)
        elif callable(key):
            key_func = key
        else:
            raise TypeError("group_by 'key' must be callable or string (column name)")
        stream_id = f"{self._stream_id}--groupby--{op}"
        origins = _group_origins.setdefault(self._stream.root(), set())
        if self._stream_id in origins:
            raise GroupByNestingLimit("Subsequent (nested) `SDF.group_by()` operations are not allowed.")
        if stream_id in origins:
            raise GroupByDuplicate(
                "An `SDF.group_by()` operation appears to be the same as another, either from using the same "
                "column or name parameter; adjust by setting a unique name with `SDF.group_by(name=<NAME>)`"
            )
        origins.add(stream_id)
        serdes = {
            "value_deserializer": value_deserializer,
            "key_deserializer": key_deserializer,
            "value_serializer": value_serializer,
            "key_serializer": key_serializer,
        }
        return self._derive(self._stream.add_group_by(key_func, op, stream_id, serdes), stream_id)

    # --- combining -------------------------------------------------------------------
    def concat(self, other: "StreamingDataFrame") -> "StreamingDataFrame":
        """A new dataframe fed with the records of this one and of ``other``.

        ``other`` is a branch of the same topic or a dataframe of another topic. Each record
        arrives once per merged dataframe it passes through (a record of two merged branches
        comes out twice), in the order the records arrive. The new dataframe's ``stream_id``
        joins both ids (sorted, ``"--"`` between them), so its stateful steps and windows use
        new stores, unrelated to those of either dataframe.

        >>> from streamspark.models import Topic
        >>> sdf = StreamingDataFrame(Topic("t"))
        >>> small, big = sdf[sdf["n"] < 10], sdf[sdf["n"] >= 10].apply(lambda v: {"n": v["n"] // 10})
        >>> small.concat(big).apply(lambda v: v["n"]).test({"n": 30})
        [(3, b'key', 0, None)]

        :raises InvalidOperation: when ``other`` is this dataframe, when one of them is upstream
            of the other, or when they belong to different applications.
        """
        if not isinstance(other, StreamingDataFrame):
            raise TypeError(f"concat() expects a StreamingDataFrame, got {type(other).__name__}")
        self._check_same_application(other)
        return self._merged(other, self._stream.merge(other._stream))  # noqa: SLF001

    def _check_same_application(self, other: "StreamingDataFrame") -> None:
        if self._registry is not None and other._registry is not None and self._registry is not other._registry:  # noqa: SLF001
            raise InvalidOperation("Cannot concatenate dataframes of different applications")

    def _merged(self, other: "StreamingDataFrame", merged: Stream) -> "StreamingDataFrame":
        """The dataframe of ``merged``, a stream fed by this dataframe's and ``other``'s topics."""
        sources = {**self._sources, **other._sources}  # noqa: SLF001
        # one in-process state for the trees now connected (sdf.test)
        states = next((_test_states[r] for r in sources.values() if r in _test_states), None)
        if states is None:
            states = KeyedStateStore()
        for root in sources.values():
            _test_states[root] = states
        merged_sdf = StreamingDataFrame(
            self._topic,
            stream=merged,
            registry=self._registry if self._registry is not None else other._registry,  # noqa: SLF001
            stream_id=_merged_stream_id(self, other),
            sources=sources,
        )
        merged_sdf._topics = self._topics + [t for t in other._topics if all(t is not mine for mine in self._topics)]  # noqa: SLF001
        return merged_sdf

    # --- joins -----------------------------------------------------------------------
    def join_asof(
        self,
        right: "StreamingDataFrame",
        how: "AsOfJoinHow" = "inner",
        on_merge: Union["OnOverlap", Callable[[Any, Any], Any]] = "raise",
        grace_ms: Union[int, "timedelta"] = timedelta(days=7),
        name: Optional[str] = None,
    ) -> "StreamingDataFrame":
        """Join each record of this dataframe with the latest record of ``right`` with the same
        key whose timestamp is at or before its own (the enrichment join).

        Records of ``right`` are stored (per key, by timestamp) and emit nothing. Each record of
        this dataframe looks up the stored right record and emits the merged value, with its own
        key, timestamp and headers. Storing a right record at ``t`` expires the key's right
        records older than ``t - grace_ms``. Both topics need the same number of partitions
        (checked by ``app.run()``). Records of both topics are processed in timestamp order
        within each micro-batch.

        >>> from streamspark.models import Topic
        >>> readings, configs = StreamingDataFrame(Topic("readings")), StreamingDataFrame(Topic("configs"))
        >>> joined = readings.join_asof(configs, how="left", on_merge="keep-left")
        >>> joined.test({"model": "m1"}, key=b"d1", timestamp=5, topic=configs.topic)
        []
        >>> joined.test({"temp": 20}, key=b"d1", timestamp=9, topic=readings.topic)
        [({'model': 'm1', 'temp': 20}, b'd1', 9, None)]

        :param right: the dataframe to look records up in (another topic).
        :param how: ``"inner"`` emits only records with a match; ``"left"`` also those without
            (merged with ``None``).
        :param on_merge: ``"raise"`` (an error when both values have a key), ``"keep-left"``,
            ``"keep-right"``, or a function ``(left, right) -> merged`` that returns a new
            object (it must not change its inputs: the right value is stored state).
        :param grace_ms: how long right records are kept, in event time (int ms or timedelta).
        :param name: the name of the store of right records (default ``"join"``); needed to
            join the same right dataframe more than once.
        :raises ValueError: both dataframes come from the same topic, or a bad ``how``/``on_merge``.
        """
        from .joins.join_asof import AsOfJoin

        return AsOfJoin(how=how, on_merge=on_merge, grace_ms=grace_ms, store_name=name).join(self, right)

    def join_interval(
        self,
        right: "StreamingDataFrame",
        how: "IntervalJoinHow" = "inner",
        on_merge: Union["OnOverlap", Callable[[Any, Any], Any]] = "raise",
        grace_ms: Union[int, "timedelta"] = timedelta(days=7),
        name: Optional[str] = None,
        backward_ms: Union[int, "timedelta"] = 0,
        forward_ms: Union[int, "timedelta"] = 0,
    ) -> "StreamingDataFrame":
        """Join records of this dataframe and ``right`` with the same key whose timestamps lie
        within an interval of each other.

        Records of both sides are stored and both emit. A record of this dataframe at ``t``
        merges with every right record in ``[t - backward_ms, t]``; a right record at ``t``
        with every record of this dataframe in ``[t - forward_ms, t]``. With both at 0 (the
        default) only equal timestamps match. ``"left"``/``"outer"`` also emit records of this
        dataframe without a match, ``"right"``/``"outer"`` right records without one. Outputs
        have the key and timestamp of the record that produced them, and no headers.

        >>> from streamspark.models import Topic
        >>> clicks, views = StreamingDataFrame(Topic("clicks")), StreamingDataFrame(Topic("views"))
        >>> pairs = clicks.join_interval(views, backward_ms=100)
        >>> pairs.test({"view": "v1"}, key=b"u", timestamp=50, topic=views.topic)
        []
        >>> pairs.test({"click": "c1"}, key=b"u", timestamp=120, topic=clicks.topic)
        [({'click': 'c1', 'view': 'v1'}, b'u', 120, [])]

        :param right: the other dataframe (another topic).
        :param how: ``"inner"``, ``"left"``, ``"right"`` or ``"outer"``.
        :param on_merge: as :meth:`join_asof`.
        :param grace_ms: how long records of both sides are kept, in event time.
        :param name: the name of the join's stores (default ``"join"``).
        :param backward_ms: how far back from a left record right records match.
        :param forward_ms: how far forward from a left record right records match.
        :raises ValueError: a self-join, a bad ``how``/``on_merge``, or ``backward_ms > grace_ms``.
        """
        from .joins.join_interval import IntervalJoin

        return IntervalJoin(
            how=how,
            on_merge=on_merge,
            grace_ms=grace_ms,
            store_name=name,
            backward_ms=backward_ms,
            forward_ms=forward_ms,
        ).join(self, right)

    def join_lookup(
        self,
        lookup: BaseLookup[Any],
        fields: dict[str, BaseField],
        on: Optional[Union[str, Callable[[dict[str, Any], Any], str]]] = None,
    ) -> "StreamingDataFrame":
        """Enrich each record's value in place with data fetched by ``lookup`` (experimental).

        For every record, ``lookup.join(fields, target, value, key, timestamp, headers)`` sets
        the ``fields`` in the value (a dict). The target key is the message key (``on=None``),
        the value's column ``on`` (a string), or ``on(value, key)`` (a callable). It runs as a
        stateless step, in ``sdf.test()`` and in Spark's Python workers (the lookup is pickled
        with the pipeline); an error of the lookup is a processing error of the record.
        Lookups provided: :class:`~streamspark.dataframe.joins.lookups.SQLiteLookup`.

        Example (a custom lookup: see :mod:`streamspark.dataframe.joins.lookups.base`)::

            from streamspark.dataframe.joins.lookups import SQLiteLookup, SQLiteLookupField

            lookup = SQLiteLookup(path="devices.db")
            fields = {"device": SQLiteLookupField(table="devices", columns=["model"], on="id")}
            sdf = sdf.join_lookup(lookup, fields, on="device_id")
            # {"device_id": "d1"} -> {"device_id": "d1", "device": {"model": "m1"}}

        :param lookup: the lookup (a :class:`~streamspark.dataframe.joins.lookups.BaseLookup`).
        :param fields: field names to set in the value, each with what to fetch (a ``BaseField``).
        :param on: how to get the target key: None (the message key), a column name, or
            ``on(value, key)``.
        :returns: this dataframe (the step is in-place).
        """
        if not isinstance(lookup, BaseLookup):
            raise TypeError(f"join_lookup() expects a BaseLookup instance, got {type(lookup).__name__}")
        if not isinstance(fields, Mapping):
            raise TypeError(f"join_lookup() expects fields as a dict of name -> field, got {type(fields).__name__}")
        for name, field in fields.items():
            if not isinstance(field, BaseField):
                raise TypeError(f"join_lookup() field {name!r} is a {type(field).__name__}, not a BaseField")
        fields = dict(fields)
        target: Callable[[Any, Any], Any]
        if on is None:
            target = _message_key
        elif isinstance(on, str):
            target = functools.partial(_column, on)
        elif callable(on):
            target = on
        else:
            raise TypeError(f"join_lookup() 'on' must be None, a column name or a callable, not {type(on).__name__}")
        join = lookup.join

        def join_lookup(value: Any, key: Any, timestamp: int, headers: Any) -> None:
            join(fields, target(value, key), value, key, timestamp, headers)

        return self.update(join_lookup, metadata=True)

    # --- column access ---------------------------------------------------------------
    def __getitem__(self, item: Any) -> Any:
        """``sdf["col"]``: a series; ``sdf[["a", "b"]]``: a projection; ``sdf[series]`` and
        ``sdf[other_sdf]``: a filter.

        A dataframe used as a filter (or a column source, see ``__setitem__``) must branch off
        this one with apply steps only, e.g. ``sdf[sdf.apply(f)]``: its steps then run inside
        the filter instead of as a branch. It is refused with ``InvalidOperation`` when it is
        this dataframe, when it does not branch off this one (another topic's, a sibling
        branch), when a step between them has other branches, or when it was used that way
        already; filter, update, expand and other steps in it raise ``ValueError``.

        >>> from streamspark.models import Topic
        >>> sdf = StreamingDataFrame(Topic("t"))
        >>> sdf[sdf.apply(lambda v: v["n"] > 1)].test({"n": 2})
        [({'n': 2}, b'key', 0, None)]
        """
        if isinstance(item, StreamingSeries):
            return self._derive(self._stream.add_filter(value_function(item), metadata=True, expression=series_expression(item)))
        if isinstance(item, StreamingDataFrame):
            return self._derive(self._stream.add_returning("filter", self._stream.diff(item._stream)))  # noqa: SLF001
        if isinstance(item, list):
            # the list itself is read for each record, as the reference does (not a copy of it)
            return self._derive(self._stream.add_apply(lambda v: {k: v[k] for k in item}))
        if isinstance(item, str):
            return StreamingSeries(name=item, sdf_id=id(self))
        raise TypeError(f'Unsupported key type "{type(item)}"')

    def __setitem__(self, key: Any, value: Any) -> None:
        """``sdf["col"] = value`` (in-place): ``value`` is a constant, a series of this
        dataframe (another dataframe's raises ``InvalidOperation``), or a dataframe branching
        off this one with apply steps (see ``__getitem__``).

        >>> from streamspark.models import Topic
        >>> sdf = StreamingDataFrame(Topic("t"))
        >>> sdf["n2"] = sdf.apply(lambda v: v["n"] * 2)
        >>> sdf.test({"n": 2})
        [({'n': 2, 'n2': 4}, b'key', 0, None)]
        """
        if isinstance(value, StreamingDataFrame):
            chain = self._stream.diff(value._stream)  # noqa: SLF001

            def _set_result(v: Any, result: Any) -> None:
                v[key] = result

            self._in_place(self._stream.add_returning("update", chain, _set_result))
        elif isinstance(value, StreamingSeries):
            if value.sdf_id != id(self):
                raise InvalidOperation(
                    "Column-setting operations must originate from target SDF; "
                    'ex: `sdf1["x"] = sdf1["y"] + 1`, NOT `sdf1["x"] = sdf2["y"] + 1` '
                )
            f = value_function(value)

            def _set(v: Any, k: Any, t: int, h: Headers) -> None:
                v[key] = f(v, k, t, h)

            expression = series_expression(value)
            assigns = (key, expression) if isinstance(key, str) and expression is not None else None
            self._in_place(self._stream.add_update(_set, metadata=True, assigns=assigns))
        else:
            assigns = (key, Constant(value)) if isinstance(key, str) else None
            self._in_place(self._stream.add_update(functools.partial(_set_constant, key, value), assigns=assigns))

    def __bool__(self) -> NoReturn:
        raise InvalidOperation(
            f"Cannot assess truth level of a {type(self).__name__} using 'bool()' or any operations that "
            "rely on it; use '&' or '|' for logical and/or comparisons"
        )

    # --- outputs ---------------------------------------------------------------------
    def to_topic(self, topic: Topic, key: Optional[Callable[[Any], Any]] = None) -> "StreamingDataFrame":
        """Produce the current value to ``topic`` (in-place); ``key(value)`` sets a new message key.

        :raises TypeError: ``topic`` is not a :class:`Topic` (e.g. a topic's name: use
            ``app.topic(name)``).
        """
        if not isinstance(topic, Topic):
            raise TypeError(f"to_topic() takes a Topic (app.topic(name)), got {type(topic).__name__}: {topic!r}")
        if self._registry is not None:
            self._registry.register_output_topic(topic)
        return self._in_place(self._stream.add_to_topic(topic, key))

    def sink(self, sink: BaseSink) -> None:
        """Send records to ``sink``.

        Terminal: it returns nothing and leaves this dataframe as it was, so calling it
        several times (or adding steps afterwards) creates sibling branches.
        """
        if not isinstance(sink, BaseSink):
            raise TypeError(f"sink() expects a BaseSink instance, got {type(sink).__name__}")
        self._stream.add_sink(sink)

    # --- testing ---------------------------------------------------------------------
    def compose(self, sink: Optional[Callable[[Any, Any, int, Headers], None]] = None) -> dict[str, Callable[..., None]]:
        """Compile the whole tree of each of this dataframe's topics into ``{topic_name: push(value, key, ts, headers)}``."""
        emitter = _TestEmitter()
        return {
            name: compose(root, collect=sink, emitter=emitter, states=_test_states.setdefault(root, KeyedStateStore()))
            for name, root in self._sources.items()
        }

    def test(
        self,
        value: Any,
        key: Any = b"key",
        timestamp: int = 0,
        headers: Optional[Any] = None,
        ctx: Optional[MessageContext] = None,
        topic: Optional[Topic] = None,
    ) -> List[Any]:
        """Run one record through the pipeline in-process (no Spark, no broker).

        Returns ``[(value, key, timestamp, headers), ...]`` for every record that reaches the
        end of a branch. ``to_topic`` outputs are serialized (so unserializable keys/values
        fail here as they would on Spark) but not sent.

        A dataframe fed by several topics (``concat``) needs ``topic``: the record enters
        that topic's tree.

        :raises KeyError: ``topic`` is not one of this dataframe's input topics.
        :raises ValueError: the dataframe has several input topics and ``topic`` is None.
        """
        root = self._sources.get(topic.name) if topic is not None else None
        if topic is not None and root is None:
            raise KeyError(
                f"Topic {topic.name!r} is not an input of this StreamingDataFrame; its topics: "
                + ", ".join(repr(name) for name in self._sources)
            )
        if root is None:
            if len(self._sources) > 1:
                raise ValueError(
                    "Topic must be provided for the multi-topic SDF: one of " + ", ".join(repr(name) for name in self._sources)
                )
            root = next(iter(self._sources.values()))
        if ctx is None:
            source = topic or self._topic
            ctx = MessageContext(
                key=key,
                topic=source.name if source is not None else "test",
                partition=0,
                offset=0,
                size=0,
                timestamp=timestamp,
                headers=headers,
            )
        result: list[Any] = []
        emitter = _TestEmitter()
        states = _test_states.get(root)
        if states is None:
            states = _test_states[root] = KeyedStateStore()
        push = compose(root, collect=lambda v, k, t, h: result.append((v, k, t, h)), emitter=emitter, states=states)

        def run() -> None:
            set_message_context(ctx)
            _current_ctx.set(ctx)
            push(value, key, timestamp, headers)

        contextvars.copy_context().run(run)
        return result


def _require_callable(method: str, func: Any) -> None:
    """A step's function must be callable (a StreamingSeries filters with ``sdf[series]``)."""
    if not callable(func):
        hint = (
            "; to filter on a StreamingSeries use sdf[series]" if method == "filter" and isinstance(func, StreamingSeries) else ""
        )
        raise TypeError(f"{method}() needs a function, got {type(func).__name__}: {func!r}{hint}")


#: whether ``register_store()`` has logged its warning
_register_store_warned = False


def joined(left: StreamingDataFrame, right: StreamingDataFrame, step: JoinStep) -> StreamingDataFrame:
    """The dataframe of the outputs of ``step`` joining ``left`` with ``right`` (for :mod:`.joins`).

    :raises InvalidOperation: the dataframes belong to different applications, one is upstream
        of the other, or a join already uses one of the stores of ``step``.
    """
    left._check_same_application(right)  # noqa: SLF001
    stream_id = _merged_stream_id(left, right)
    return left._merged(right, left.stream.join(right.stream, step, stream_id))  # noqa: SLF001


def _merged_stream_id(left: StreamingDataFrame, right: StreamingDataFrame) -> str:
    """The ``stream_id`` of a dataframe merging ``left`` and ``right``: both ids, sorted, with
    ``"--"`` between them. Ids made of input topic names count each topic once, as the
    reference names a dataframe of several topics by its topics: joining ``"left--right"``
    with ``"right"`` again gives ``"left--right"``."""
    ids = {left.stream_id, right.stream_id}
    names = {t.name for t in left.topics} | {t.name for t in right.topics}
    parts = {part for sid in ids for part in sid.split("--")}
    if parts <= names:
        return "--".join(sorted(parts))
    return "--".join(sorted(ids))


def _set_constant(column: Any, constant: Any, value: Any) -> None:
    operator.setitem(value, column, constant)


def _message_key(value: Any, key: Any) -> Any:
    return key


def _column(column: str, value: Any, key: Any) -> Any:
    return value[column]
