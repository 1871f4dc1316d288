"""The window algorithms: one record in, (updated windows, expired windows) out.

Each processor keeps, per message key, one plain dict in the window store (pickled with the
rest of the key bucket's state on Spark; in memory in ``sdf.test()``). Semantics follow the
reference (see the README's Windows section); the code is ours.
"""

from __future__ import annotations

import copy
import logging
import math
from typing import Any, Callable, Optional, Protocol

from ...context import current_message_context
from .aggregations import BaseAggregator, BaseCollector

__all__ = (
    "Aggregation",
    "WindowStore",
    "TimeWindowProcessor",
    "SlidingWindowProcessor",
    "CountWindowProcessor",
    "SessionWindowProcessor",
    "window_ranges",
)

logger = logging.getLogger(__name__)

#: (key, result) pairs
KeyResults = list[tuple[Any, dict[str, Any]]]
OnLate = Callable[..., Optional[bool]]
#: ``f(aggregated, value, key, timestamp, headers) -> bool``: True closes the window now
UpdateTrigger = Callable[[Any, Any, Any, int, Any], bool]


class WindowStore(Protocol):
    """Gives a window its per-key data dict (created empty on first use)."""

    def window_data(self, scope: str, key: Any) -> dict[str, Any]: ...

    def drop_window_data(self, scope: str, key: Any) -> None: ...


class WindowStoreWithScan(WindowStore, Protocol):
    def window_scope(self, scope: str) -> list[dict[str, Any]]: ...


def window_ranges(timestamp_ms: int, duration_ms: int, step_ms: Optional[int] = None) -> list[tuple[int, int]]:
    """The ``[start, end)`` windows containing ``timestamp_ms``, aligned to the epoch, oldest first.

    >>> window_ranges(25, 10), window_ranges(25, 10, 5), window_ranges(3, 10, 5)
    ([(20, 30)], [(20, 30), (25, 35)], [(0, 10)])
    """
    step = step_ms or duration_ms
    out = []
    start = timestamp_ms - timestamp_ms % step
    while start > timestamp_ms - duration_ms and start >= 0:
        out.append((start, start + duration_ms))
        start -= step
    out.reverse()
    return out


#: result types that need no copy: nothing downstream can change them
_IMMUTABLE = frozenset({int, float, str, bool, bytes, type(None)})


def _detached(value: Any) -> Any:
    """A copy of ``value`` that shares no mutable object with it (immutable values as they are).

    Window results go through it: a step that changes an emitted result (or a reducer that
    changes its accumulator in place) must not change the window's stored aggregate, nor
    results emitted earlier.

    >>> stored = {"seen": [1, 2]}
    >>> emitted = _detached(stored)
    >>> emitted["seen"].append(3)
    >>> stored
    {'seen': [1, 2]}
    """
    cls = value.__class__
    if cls in _IMMUTABLE:
        return value
    if cls is list:
        return [v if v.__class__ in _IMMUTABLE else _detached(v) for v in value]
    if cls is dict:
        return {k: v if v.__class__ in _IMMUTABLE else _detached(v) for k, v in value.items()}
    return copy.deepcopy(value)


class Aggregation:
    """The aggregations of one window: a single one (``{"start", "end", "value"}``) or named ones."""

    def __init__(self, aggregators: dict[str, BaseAggregator], collectors: dict[str, BaseCollector], single: bool) -> None:
        if not aggregators and not collectors:
            raise ValueError("a window needs at least one aggregation")
        if single and len(aggregators) + len(collectors) != 1:
            raise ValueError("a single-aggregation window takes exactly one aggregation")
        self.single = single
        self.aggregators = {f"{col}/{agg.state_suffix}": (col, agg) for col, agg in aggregators.items()}
        self.collectors = dict(collectors)
        self.aggregate = bool(aggregators)
        self.collect = bool(collectors)
        columns = {c.column for c in collectors.values()}
        self._collect_all = None in columns or single
        self._collect_columns = sorted(c for c in columns if c is not None)

    def initialize(self) -> dict[str, Any]:
        return {k: agg.initialize() for k, (_, agg) in self.aggregators.items()}

    def add(self, states: Optional[dict[str, Any]], value: Any, timestamp: int) -> dict[str, Any]:
        if states is None:
            states = self.initialize()
        return {
            k: agg.agg(states[k] if k in states else agg.initialize(), value, timestamp)
            for k, (_, agg) in self.aggregators.items()
        }

    def merge(self, a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
        """The states of two merged sessions (``a`` starts earlier) combined."""
        return {k: agg.merge(a[k], b[k]) for k, (_, agg) in self.aggregators.items()}

    def collect_value(self, value: Any) -> Any:
        if self._collect_all:
            return value
        return {c: value[c] for c in self._collect_columns}

    def results(self, states: Optional[dict[str, Any]], collected: list[Any], start: int, end: int) -> dict[str, Any]:
        """The output of one window: every value is :func:`_detached` from the stored state."""
        if states is None:
            states = self.initialize()
        if self.single:
            result: dict[str, Any] = {"start": start, "end": end}
            if self.aggregators:
                [(k, (_, agg))] = self.aggregators.items()
                result["value"] = _detached(agg.result(states.get(k, agg.initialize())))
            else:
                [collector] = self.collectors.values()
                result["value"] = _detached(collector.result(collected))
            return result
        result = {}
        for k, (col, agg) in self.aggregators.items():
            result[col] = _detached(agg.result(states[k] if k in states else agg.initialize()))
        for col, collector in self.collectors.items():
            source = collector.column
            result[col] = _detached(collector.result(collected if source is None else [c[source] for c in collected]))
        result["start"] = start
        result["end"] = end
        return result


class _Base:
    #: close a key's open windows after this much processing time without a record (None: never)
    idle_ms: Optional[int] = None

    def __init__(self, name: str, aggregation: Aggregation, on_late: Optional[OnLate] = None) -> None:
        self.name = name
        self.aggregation = aggregation
        self.on_late = on_late

    def columnar(self, emit: str) -> Any:
        """The columnar form of this window for ``emit`` ("current"/"final"), or None when
        only the per-record path applies (see ``_columnar``)."""
        from ._columnar import ColumnarTimeWindow

        return ColumnarTimeWindow.for_processor(self, emit)

    def touch(self, data: dict[str, Any], key: Any, now_ms: int) -> None:
        """Remember when ``key`` last sent (processing time), for closing quiet keys."""
        data["_key"] = key
        data["_seen_at"] = now_ms

    def close_quiet(self, store: "WindowStoreWithScan", now_ms: int) -> KeyResults:
        """Close every open window of the keys quiet for ``idle_ms`` (processing time)."""
        if self.idle_ms is None:
            return []
        out: KeyResults = []
        for data in store.window_scope(self.name):
            seen = data.get("_seen_at")
            if seen is not None and now_ms - seen >= self.idle_ms and self._has_open(data):
                out.extend(self._close_all(store, data["_key"], data))
        return out

    def _has_open(self, data: dict[str, Any]) -> bool:
        return bool(data.get("windows") or data.get("sessions") or data.get("events"))

    def _close_all(self, store: WindowStore, key: Any, data: dict[str, Any]) -> KeyResults:
        raise NotImplementedError

    def report_late(self, value: Any, key: Any, ts: int, start: int, end: int, late_by: int) -> None:
        """Report a record too late for window ``[start, end)``: ``on_late`` decides whether it is logged."""
        ctx = current_message_context.get()
        log = True
        if self.on_late is not None:
            log = bool(
                self.on_late(
                    value,
                    key,
                    ts,
                    late_by,
                    start,
                    end,
                    self.name,
                    ctx.topic if ctx else None,
                    ctx.partition if ctx else None,
                    ctx.offset if ctx else None,
                )
            )
        if log:
            where = f" partition={ctx.topic}[{ctx.partition}] offset={ctx.offset}" if ctx else ""
            logger.warning(
                "Skipping window processing for the closed window timestamp_ms=%d window=(%d, %d) late_by_ms=%d store_name=%s%s",
                ts,
                start,
                end,
                late_by,
                self.name,
                where,
            )


#: keys a window processor remembers the opening order of, per partition (see _EventTime)
_MAX_OPENED = 100_000


def _partition_scope() -> tuple[Any, ...]:
    ctx = current_message_context.get()
    return ("__partition__", ctx.topic if ctx else None, ctx.partition if ctx else None)


class _EventTime:
    """Where a time window's "now" comes from: the key's latest timestamp, or the partition's."""

    def __init__(self, name: str, by_partition: bool) -> None:
        self.name = name
        self.by_partition = by_partition
        #: partition closing: the order in which keys opened windows since this processor was
        #: built (a micro-batch on Spark, as Quix Streams orders the keys of its checkpoint)
        self._opened: dict[tuple[Any, ...], dict[str, int]] = {}

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "_opened": {}}  # what sdf.test() saw stays with it

    def peek(self, store: WindowStore, data: dict[str, Any], ts: int) -> int:
        """The event time :meth:`advance` would move to for ``ts``, without moving it."""
        if not self.by_partition:
            return max(ts, data.get("latest") or 0)
        return max(ts, store.window_data(self.name, _partition_scope()).get("latest") or 0)

    def advance(self, store: WindowStore, data: dict[str, Any], key: Any, ts: int) -> int:
        if not self.by_partition:
            latest = max(ts, data.get("latest") or 0)
            data["latest"] = latest
            return latest
        index = store.window_data(self.name, _partition_scope())
        latest = max(ts, index.get("latest") or 0)
        index["latest"] = latest
        return latest

    def track(self, store: WindowStore, key: Any, due: int) -> None:
        """Partition closing: remember that ``key`` has windows, the first closing at threshold ``due``."""
        if self.by_partition:
            scope, name = _partition_scope(), repr(key)
            index = store.window_data(self.name, scope)
            keys = index.setdefault("keys", {})
            seen = keys.get(name)
            if seen is not None:
                due = min(seen[1], due)
            keys[name] = (key, due)
            index["min_due"] = min(index.get("min_due", math.inf), due)
            opened = self._opened.setdefault(scope, {})
            if len(opened) < _MAX_OPENED:  # bounded: past it, later keys close in key order
                opened.setdefault(name, len(opened))

    def expire_due(self, store: WindowStore, threshold: int, expire: Callable[[Any], KeyResults]) -> KeyResults:
        """Partition closing: ``expire(key)`` for the keys whose windows may close at
        ``threshold``: the keys that opened windows since this processor was built first, in that
        order (as Quix Streams closes the keys written in its current checkpoint first), then the
        others in key order. The partition's earliest due threshold skips the scan otherwise."""
        scope = _partition_scope()
        index = store.window_data(self.name, scope)
        if index.get("min_due", math.inf) > threshold:
            return []
        keys = index.get("keys", {})
        out: KeyResults = []
        opened = self._opened.get(scope, {})
        for name in sorted(keys, key=lambda n: (0, opened[n], "") if n in opened else (1, 0, n)):
            entry = keys.get(name)
            if entry is not None and entry[1] <= threshold:
                out.extend(expire(entry[0]))
        index["min_due"] = min((due for _, due in keys.values()), default=math.inf)
        return out

    def retrack(self, store: WindowStore, key: Any, due: Optional[int]) -> None:
        """Partition closing: after an expiry, ``key``'s next due threshold (None: nothing left open)."""
        if self.by_partition:
            keys = store.window_data(self.name, _partition_scope()).get("keys", {})
            if due is None:
                keys.pop(repr(key), None)
            else:
                keys[repr(key)] = (key, due)


class TimeWindowProcessor(_Base):
    """Tumbling (``step_ms=None``) and hopping time windows, ``[start, end)`` aligned to the epoch.

    A window closes when event time reaches ``end + grace_ms``; a record whose window is
    closed is late for it (dropped there, reported through ``on_late``).

    ``before_update(aggregated, value, key, timestamp, headers)`` and ``after_update(...)``
    close a window early when they return True: ``before_update`` sees the window's state
    before the record is added and closes it without the record, ``after_update`` sees the
    state with the record and closes it with it. A closed window is emitted by ``.final()``
    (after the windows closed by event time) and deleted; the next record of its range starts
    it afresh. ``aggregated`` is the aggregator's state (a dict of ``"<column>/<suffix>"`` states
    for ``.agg()``), or the list of collected items for collect-only windows.
    """

    def __init__(
        self,
        name: str,
        aggregation: Aggregation,
        duration_ms: int,
        grace_ms: int = 0,
        step_ms: Optional[int] = None,
        on_late: Optional[OnLate] = None,
        by_partition: bool = False,
        before_update: Optional[UpdateTrigger] = None,
        after_update: Optional[UpdateTrigger] = None,
    ) -> None:
        super().__init__(name, aggregation, on_late)
        self.duration_ms = duration_ms
        self.grace_ms = grace_ms
        self.step_ms = step_ms
        self.clock = _EventTime(name, by_partition)
        self.before_update = before_update
        self.after_update = after_update

    @property
    def has_triggers(self) -> bool:
        """Whether ``before_update`` or ``after_update`` may close windows early."""
        return self.before_update is not None or self.after_update is not None

    def _trigger_view(self, states: Optional[dict[str, Any]], collected: list[Any]) -> Any:
        """What the update callbacks see: the aggregator's own state for a single aggregation,
        all states for ``.agg()``, the collected items without aggregators."""
        agg = self.aggregation
        if not agg.aggregate:
            return collected
        assert states is not None
        if agg.single:
            [(k, (_, aggregator))] = agg.aggregators.items()
            return states[k] if k in states else aggregator.initialize()
        return states

    def _collected(self, data: dict[str, Any], start: int, end: int) -> list[Any]:
        return [v for t, _, v in sorted(i for i in data.get("items", []) if start <= i[0] < end)]

    def process(
        self, value: Any, key: Any, ts: int, store: WindowStore, want_updates: bool, headers: Any = None
    ) -> tuple[KeyResults, KeyResults]:
        data = store.window_data(self.name, key)
        windows: dict[int, list[Any]] = data.setdefault("windows", {})
        agg = self.aggregation
        latest = self.clock.peek(store, data, ts)
        max_expired_end = latest - self.grace_ms
        max_expired_start = max_expired_end - self.duration_ms
        # aggregate first, store afterwards: a record whose aggregation raises changes nothing
        accepted: list[tuple[int, int, Any]] = []
        triggered: KeyResults = []
        closed: list[int] = []
        in_time = False
        for start, end in window_ranges(ts, self.duration_ms, self.step_ms):
            if start <= max_expired_start:
                self.report_late(value, key, ts, start, end, max_expired_end - ts)
                continue
            in_time = True
            entry = windows.get(start)
            states = entry[1] if entry is not None else (agg.initialize() if agg.aggregate else None)
            added: Optional[dict[str, Any]] = None
            if self.has_triggers:
                result, added = self._trigger(value, key, ts, headers, data, start, end, states)
                if result is not None:
                    triggered.append((key, result))
                    closed.append(start)
                    continue
            if added is None and agg.aggregate:
                # (an aggregator may change its state in place: the record is added once)
                added = agg.add(states, value, ts)
            accepted.append((start, end, added))
        if accepted or not closed or self.clock.by_partition:
            # a key's event time moves with the windows it stores: a record whose every window an
            # update callback closed leaves it where it was (as the reference does)
            self.clock.advance(store, data, key, ts)
        for start in closed:
            windows.pop(start, None)
        updated: KeyResults = []
        for start, end, states in accepted:
            windows[start] = [end, states]
            if agg.aggregate and want_updates:
                updated.append((key, agg.results(states, [], start, end)))
        if in_time and agg.collect:
            # kept even when an update callback closed the record's windows (as the reference does)
            seq = data["seq"] = data.get("seq", 0) + 1
            data.setdefault("items", []).append((ts, seq, agg.collect_value(value)))
        if accepted:
            self.clock.track(store, key, min(windows))
        if self.clock.by_partition:
            expired = self.clock.expire_due(store, max_expired_start, lambda other: self._expire(store, other, max_expired_start))
        else:
            expired = self._expire(store, key, max_expired_start, data)
        return updated, (expired + triggered) if triggered else expired

    def _trigger(
        self,
        value: Any,
        key: Any,
        ts: int,
        headers: Any,
        data: dict[str, Any],
        start: int,
        end: int,
        states: Optional[dict[str, Any]],
    ) -> tuple[Optional[dict[str, Any]], Optional[dict[str, Any]]]:
        """The result of window ``[start, end)`` when an update callback closes it for this
        record, else None (the record is then added to the window); and the window's states
        with the record when ``after_update`` was asked (so the record is not added twice)."""
        agg = self.aggregation
        if not agg.aggregate and not agg.collect:
            return None, None
        collected = self._collected(data, start, end) if agg.collect else []
        if self.before_update is not None and self.before_update(self._trigger_view(states, collected), value, key, ts, headers):
            return agg.results(states, collected, start, end), None
        if self.after_update is None:
            return None, None
        new_states = agg.add(states, value, ts) if agg.aggregate else None
        new_collected = [*collected, agg.collect_value(value)] if agg.collect else []
        if self.after_update(self._trigger_view(new_states, new_collected), value, key, ts, headers):
            return agg.results(new_states, new_collected, start, end), None
        return None, new_states

    def _close_all(self, store: WindowStore, key: Any, data: dict[str, Any]) -> KeyResults:
        windows = data.get("windows", {})
        if not windows:
            return []
        last_start = max(windows)
        # the key's event time moves past what was closed: later records for these windows are late
        data["latest"] = max(data.get("latest") or 0, windows[last_start][0] + self.grace_ms)
        return self._expire(store, key, last_start, data)

    def _expire(self, store: WindowStore, key: Any, max_expired_start: int, data: Optional[dict[str, Any]] = None) -> KeyResults:
        if data is None:
            data = store.window_data(self.name, key)
        windows: dict[int, list[Any]] = data.get("windows", {})
        due = sorted(s for s in windows if s <= max_expired_start)
        if not due:
            return []
        agg = self.aggregation
        items = data.get("items", [])
        out: KeyResults = []
        # a window reopened (after an update callback closed it) below what already expired is
        # dropped without a result, as the reference does
        expired_upto = -1
        if self.has_triggers:
            expired_upto = data.get("expired_upto", -1)
            data["expired_upto"] = max(expired_upto, due[-1])
        for start in due:
            end, states = windows.pop(start)
            if start <= expired_upto:
                continue
            collected = []
            if agg.collect:
                collected = [v for t, _, v in sorted(i for i in items if start <= i[0] < end)]
            out.append((key, agg.results(states, collected, start, end)))
        keep_from = min(windows) if windows else None
        if agg.collect:
            # items before the last closed window's start can belong to no window any more; the
            # later ones stay even when no window is open: an update callback may have closed
            # their windows, and a window reopened over them collects them again (as the
            # reference does)
            data["items"] = [i for i in items if i[0] >= due[-1]]
        self.clock.retrack(store, key, keep_from)
        return out


class SlidingWindowProcessor(_Base):
    """Sliding time windows, per key: each record has a *left* window ``[max(0, t - duration), t]``
    (both ends inclusive) ending at it, and a *right* window ``[t + 1, t + 1 + duration]``
    starting just after it, which later records fill. A window keeps its aggregate and the
    largest timestamp it holds; only a window ending at a record's timestamp is emitted.

    The windows and their lateness follow the reference's algorithm step for step, including
    its behaviour on records out of order (:meth:`process`). ``.current()`` emits the windows a
    record updated (latest created first); ``.final()`` emits each window once, when the key's
    event time passes ``start + duration + grace_ms``.
    """

    def __init__(
        self, name: str, aggregation: Aggregation, duration_ms: int, grace_ms: int = 0, on_late: Optional[OnLate] = None
    ) -> None:
        super().__init__(name, aggregation, on_late)
        self.duration_ms = duration_ms
        self.grace_ms = grace_ms

    def process(
        self, value: Any, key: Any, ts: int, store: WindowStore, want_updates: bool, headers: Any = None
    ) -> tuple[KeyResults, KeyResults]:
        """One record of ``key`` at ``ts``.

        - The key's event time is the latest timestamp written into one of its windows. A
          record at or before ``event time - grace - 1 - duration`` is late: reported, dropped.
        - Going back from the record's right window over the stored windows: one that already
          starts at ``t + 1`` is the right window; one that contains ``t`` gets the record (or,
          when it already expired, reports it late), and first lends a copy of its aggregate to
          the right window when that is missing and the window holds a later record; one that
          ends at ``t`` is the left window, which gets the record (and, when it held only
          earlier records, the right window of its latest one is created with this record
          alone when missing); the first one that ends
          before ``t`` is the previous record's: its aggregate (when it overlaps) plus the
          record makes the left window, and the previous record's right window is created with
          this record alone when missing and it would reach ``t``. Without any of these, the
          left window is created when it has not expired yet.
        - Windows whose start passed the watermark expire (``.final()`` emits those ending at
          their latest record), and those a duration older are deleted.
        """
        data = store.window_data(self.name, key)
        if "events" in data:
            self._upgrade(data, key, store)
        return self._apply(data, value, key, ts, want_updates, report=True)

    def _apply(
        self, data: dict[str, Any], value: Any, key: Any, ts: int, want_updates: bool, report: bool
    ) -> tuple[KeyResults, KeyResults]:
        agg = self.aggregation
        d = self.duration_ms
        latest = max(ts, data.get("latest") or 0)
        max_expired_end = latest - self.grace_ms - 1
        max_expired_start = max_expired_end - d
        delete_upto = max_expired_start - d
        left_start = max(0, ts - d)
        late_by = max_expired_end + 1 - ts
        if ts <= max_expired_start:
            if report:
                self.report_late(value, key, ts, left_start, ts, late_by)
            return [], []
        # a record whose aggregation raises changes nothing
        if agg.aggregate:
            agg.add(agg.initialize(), value, ts)
        collected_value = agg.collect_value(value) if agg.collect else None
        windows: dict[tuple[int, int], list[Any]] = data.setdefault("windows", {})

        def put(start: int, end: int, max_ts: int, states: Any) -> Any:
            if end <= start:
                raise ValueError(f"Invalid window duration: window end {end} is smaller or equal than window start {start}")
            windows[(start, end)] = [max_ts, states]
            data["latest"] = ts if data.get("latest") is None else max(data["latest"], ts)
            return states

        def plus_record(states: Any) -> Any:
            return agg.add(states, value, ts) if agg.aggregate else None

        updated: KeyResults = []
        right_start = ts + 1
        right_exists = False
        starts = {left_start}
        placed = False
        scan_from = max(0, left_start - d) - 1
        for start, end in sorted((w for w in windows if scan_from < w[0] <= right_start), reverse=True):
            max_ts, states = windows[(start, end)]
            starts.add(start)
            if start == right_start:
                right_exists = True
            elif end > ts:  # a window holding the record's time
                if not right_exists and max_ts > ts:
                    put(right_start, right_start + d, max_ts, _detached(states))
                    right_exists = True
                if start > max_expired_start:
                    max_ts = max(ts, max_ts)
                    states = put(start, end, max_ts, plus_record(states))
                    if end == max_ts:
                        updated.append((key, agg.results(states, [], start, end)))
                elif report:
                    self.report_late(value, key, ts, start, end, late_by)
            elif end == ts:  # the record's left window, made earlier (a right window reaching it)
                previous_right = max_ts + 1
                if previous_right not in starts and max_ts < ts:
                    put(previous_right, previous_right + d, ts, plus_record(agg.initialize() if agg.aggregate else None))
                if start > max_expired_start:
                    states = put(start, end, ts, plus_record(states))
                    updated.append((key, agg.results(states, [], start, end)))
                elif report:
                    self.report_late(value, key, ts, start, end, late_by)
                placed = True
                break
            else:  # the latest window before the record: the previous record's left window
                previous_right = max_ts + 1
                if previous_right not in starts and previous_right + d >= ts:
                    put(previous_right, previous_right + d, ts, plus_record(agg.initialize() if agg.aggregate else None))
                base = (agg.initialize() if agg.aggregate else None) if left_start > max_ts else _detached(states)
                states = put(left_start, ts, ts, plus_record(base))
                updated.append((key, agg.results(states, [], left_start, ts)))
                delete_upto = min(start - 1, max_expired_start)
                placed = True
                break
        if not placed and left_start > max_expired_start:
            states = put(left_start, ts, ts, plus_record(agg.initialize() if agg.aggregate else None))
            updated.append((key, agg.results(states, [], left_start, ts)))
        if agg.collect:
            seq = data["seq"] = data.get("seq", 0) + 1
            data.setdefault("items", []).append((ts, seq, collected_value))
        expired = self._expire(data, key, max_expired_start)
        self._delete(data, delete_upto)
        updated.reverse()
        return (updated if want_updates else []), expired

    def _expire(self, data: dict[str, Any], key: Any, max_expired_start: int) -> KeyResults:
        """The windows that start after the last expired one and at or before
        ``max_expired_start``: those ending at their latest record are the results."""
        windows = data.get("windows", {})
        expired_after = data.get("expired_upto", -1)
        due = sorted(w for w in windows if expired_after < w[0] <= max_expired_start)
        if not due:
            return []
        data["expired_upto"] = due[-1][0]
        agg = self.aggregation
        items = data.get("items", [])
        out: KeyResults = []
        for start, end in due:
            max_ts, states = windows[(start, end)]
            if end != max_ts:
                continue
            collected = [v for t, _, v in sorted(i for i in items if start <= i[0] <= end)] if agg.collect else []
            out.append((key, agg.results(states, collected, start, end)))
        return out

    def _delete(self, data: dict[str, Any], delete_upto: int) -> None:
        """Forget the windows (and collected values) that start at or before ``delete_upto``,
        from where the previous deletion stopped."""
        windows = data.get("windows", {})
        deleted_after = data.get("deleted_upto", -1)
        gone = sorted(w for w in windows if deleted_after < w[0] <= delete_upto)
        for window in gone:
            del windows[window]
        if gone and gone[-1][0]:  # a deletion that ended at start 0 leaves the mark unset
            data["deleted_upto"] = gone[-1][0]
        if self.aggregation.collect:
            kept_from = max(data.get("values_deleted_upto") or -1, 0)
            items = data.get("items", [])
            removed = [i[0] for i in items if kept_from <= i[0] < delete_upto]
            if removed:
                data["items"] = [i for i in items if not kept_from <= i[0] < delete_upto]
                data["values_deleted_upto"] = max(removed)

    def _upgrade(self, data: dict[str, Any], key: Any, store: WindowStore) -> None:
        """A key's state written by an earlier version (its records, not windows): the records
        are replayed into windows, in the order they came."""
        events = sorted(data.pop("events"), key=lambda e: e[1])
        closed_upto = data.pop("closed_upto", -1)
        latest = data.pop("latest", None)
        data.pop("seq", None)
        for t, _, v in events:
            self._apply(data, v, key, t, want_updates=False, report=False)
        if latest is not None:
            data["latest"] = max(latest, data.get("latest") or 0)
        data["expired_upto"] = max(closed_upto, data.get("expired_upto", -1))

    def _close_all(self, store: WindowStore, key: Any, data: dict[str, Any]) -> KeyResults:
        if "events" in data:
            self._upgrade(data, key, store)
        windows = data.get("windows", {})
        if not windows:
            return []
        last = max(max_ts for max_ts, _ in windows.values())
        out = self._expire(data, key, max(w[0] for w in windows))
        data["windows"] = {}
        data["items"] = []
        data["expired_upto"] = max(data.get("expired_upto", -1), last - self.duration_ms)
        data["latest"] = max(data.get("latest") or 0, last + self.grace_ms + 1)
        return out


class CountWindowProcessor(_Base):
    """Tumbling (``step=None``), hopping and sliding (``step=1``) count windows.

    A window closes as soon as it holds ``count`` records; its start and end are the
    smallest and largest timestamps it saw.
    """

    def __init__(self, name: str, aggregation: Aggregation, count: int, step: Optional[int] = None) -> None:
        super().__init__(name, aggregation, None)
        if count < 1:
            raise ValueError("count must be at least 1")
        if step is not None and step < 1:
            raise ValueError("step must be at least 1")
        self.count = count
        self.step = step

    def process(
        self, value: Any, key: Any, ts: int, store: WindowStore, want_updates: bool, headers: Any = None
    ) -> tuple[KeyResults, KeyResults]:
        data = store.window_data(self.name, key)
        windows: list[dict[str, Any]] = data.get("windows", [])
        agg = self.aggregation
        opens = not windows or (self.step is not None and windows[0]["count"] % self.step == 0)
        # aggregate first, store afterwards: a record whose aggregation raises changes nothing
        item = agg.collect_value(value) if agg.collect else None
        new_aggs = [agg.add(w["aggs"], value, ts) if agg.aggregate else None for w in windows]
        if opens:
            new_aggs.append(agg.add(agg.initialize(), value, ts) if agg.aggregate else None)
            windows.append({"count": 0, "start": ts, "end": ts, "aggs": None, "items": []})
        data["windows"] = windows
        updated: KeyResults = []
        expired: KeyResults = []
        for window, aggs in zip(list(windows), new_aggs):
            window["count"] += 1
            if ts < window["start"]:
                window["start"] = ts
            elif ts > window["end"]:
                window["end"] = ts
            if agg.aggregate:
                window["aggs"] = aggs
                if want_updates:
                    updated.append((key, agg.results(window["aggs"], [], window["start"], window["end"])))
            if agg.collect:
                window["items"].append(item)
            if window["count"] >= self.count:
                windows.remove(window)
                items = self._shared_items(data, window["items"]) if agg.collect and self._steps_apart else window["items"]
                expired.append((key, agg.results(window["aggs"], items, window["start"], window["end"])))
        return updated, expired

    @property
    def _steps_apart(self) -> bool:
        """Hopping windows whose step is at least their count: one window at a time, each
        starting where the previous one closed."""
        return self.step is not None and self.step >= self.count

    def _shared_items(self, data: dict[str, Any], items: list[Any]) -> list[Any]:
        """The collected items of a full window of hopping count windows with ``step >= count``.

        The reference numbers a window's items by their position in it (0 to count - 1) in a
        collection shared by the key's windows, reads a closing window's items by position, then
        deletes positions from the last one it deleted up to the step. After the key's first
        window that deletes only the last position: every later window leaves its other items
        behind, and each window closing afterwards collects them again, position by position
        before its own item (oldest first). Reproduced as is: a defect of the reference (items
        of earlier windows reappear, and the key's state grows with every window).
        """
        kept: list[list[Any]] = data.setdefault("kept_items", [[] for _ in range(self.count - 1)])
        collected: list[Any] = []
        for position, own in enumerate(items):
            if position < len(kept):
                collected.extend(kept[position])
            collected.append(own)
        if data.get("first_closed"):
            for position, own in enumerate(items[: self.count - 1]):
                kept[position].append(own)
        else:
            data["first_closed"] = True
        return collected

    def _close_all(self, store: WindowStore, key: Any, data: dict[str, Any]) -> KeyResults:
        """A quiet key's count windows close with what they hold."""
        windows = data.get("windows", [])
        out = [(key, self.aggregation.results(w["aggs"], w["items"], w["start"], w["end"])) for w in windows]
        data["windows"] = []
        return out


class SessionWindowProcessor(_Base):
    """Session windows: a key's records at most ``gap_ms`` apart form one session.

    Sessions are half-open, ``[start, end)`` with ``end`` = the last record's timestamp + 1.
    A record joins a session when ``start - gap <= t < end + gap`` (and merges the sessions it
    bridges). With ``watermark`` the key's (or partition's) latest event time, a record is
    late when ``t < watermark - gap - grace``, and a session closes once ``end <= watermark
    - 2 * gap - grace`` (no record that is not late can extend it any more).
    """

    def __init__(
        self,
        name: str,
        aggregation: Aggregation,
        gap_ms: int,
        grace_ms: int = 0,
        on_late: Optional[OnLate] = None,
        by_partition: bool = False,
    ) -> None:
        super().__init__(name, aggregation, on_late)
        if gap_ms <= 0:
            raise ValueError("gap_ms must be positive")
        self.gap_ms = gap_ms
        self.grace_ms = grace_ms
        self.clock = _EventTime(name, by_partition)

    def _result(self, session: dict[str, Any]) -> dict[str, Any]:
        agg = self.aggregation
        # (re-extracting is a no-op on stored items, and reads state stored whole by earlier versions)
        collected = [agg.collect_value(v) for _, _, v in sorted(session["events"])] if agg.collect else []
        return agg.results(session["aggs"], collected, session["start"], session["end"])

    def process(
        self, value: Any, key: Any, ts: int, store: WindowStore, want_updates: bool, headers: Any = None
    ) -> tuple[KeyResults, KeyResults]:
        data = store.window_data(self.name, key)
        sessions: list[dict[str, Any]] = data.setdefault("sessions", [])
        gap = self.gap_ms
        late_before = self.clock.peek(store, data, ts) - gap - self.grace_ms
        if ts < late_before:
            self.report_late(value, key, ts, ts, ts + 1, late_before - ts)
            return [], []
        close_before = late_before - gap  # sessions ending at or before this are closed
        joined = [s for s in sessions if s["start"] - gap <= ts < s["end"] + gap]
        seq = data.get("seq", 0) + 1
        # aggregate first, store afterwards: a record whose aggregation raises changes nothing
        agg = self.aggregation
        aggs = None
        if agg.aggregate:
            aggs = agg.add(joined[0]["aggs"] if joined else agg.initialize(), value, ts)
            for later in joined[1:]:  # a bridging record merges the sessions (earlier first)
                aggs = agg.merge(aggs, later["aggs"])
        # only what the collectors keep is stored; extracting it now makes a record without
        # a collected column fail here, on its own record (as the reference does)
        event = (ts, seq, agg.collect_value(value) if agg.collect else None)
        if len(joined) == 1:
            session = joined[0]
            session["events"].append(event)
            session["start"] = min(session["start"], ts)
            session["end"] = max(session["end"], ts + 1)
        else:
            events = [e for s in joined for e in s["events"]] + [event]
            session = {"start": min(e[0] for e in events), "end": max(e[0] for e in events) + 1, "events": events}
            for s in joined:
                sessions.remove(s)
            sessions.append(session)
            sessions.sort(key=lambda s: s["start"])
        session["aggs"] = aggs
        data["seq"] = seq
        self.clock.advance(store, data, key, ts)
        self.clock.track(store, key, session["end"])
        updated: KeyResults = [(key, self._result(session))] if want_updates else []
        if self.clock.by_partition:
            expired = self.clock.expire_due(store, close_before, lambda other: self._expire(store, other, close_before))
        else:
            expired = self._expire(store, key, close_before, data)
        return updated, expired

    def _close_all(self, store: WindowStore, key: Any, data: dict[str, Any]) -> KeyResults:
        sessions = data.get("sessions", [])
        if not sessions:
            return []
        last_end = max(s["end"] for s in sessions)
        # the key's event time moves past what was closed: later records for these sessions are late
        data["latest"] = max(data.get("latest") or 0, last_end + 2 * self.gap_ms + self.grace_ms)
        return self._expire(store, key, last_end, data)

    def _expire(self, store: WindowStore, key: Any, close_before: int, data: Optional[dict[str, Any]] = None) -> KeyResults:
        if data is None:
            data = store.window_data(self.name, key)
        sessions = data.get("sessions", [])
        due = [s for s in sessions if s["end"] <= close_before]
        for s in due:
            sessions.remove(s)
        self.clock.retrack(store, key, min((s["end"] for s in sessions), default=None))
        return [(key, self._result(s)) for s in due]
