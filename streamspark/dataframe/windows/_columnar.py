"""The columnar path of time windows: a whole batch of records of one state bucket at once.

The general path (:class:`~._process.TimeWindowProcessor`) handles one record at a time. For
``.final()`` tumbling and hopping windows closing by key with the built-in aggregations
``Count``, ``Sum``, ``Mean``, ``Max`` and ``Min``, this module computes the same outcome for a
batch of records with numpy: which windows each record falls into, which of those are late
(against the key's running maximum timestamp, in record order), which windows close and at
which record, and every window's aggregate. It reads and writes the same per-key window data
as the general path, so the two can take turns on one state.

Whenever the batch holds something it does not model exactly (a value that is not a dict, a
value type other than int/float, NaN or signed zeros for ``Max``/``Min``, integers too large for
exact float arithmetic, mixed int/float extremes), :meth:`ColumnarTimeWindow.plan` returns
None and the caller runs the batch through the general path instead. Floating-point sums are
accumulated in record order starting from the stored value, like the general path, so results
are bit-identical.

>>> from streamspark.dataframe.windows._process import Aggregation, TimeWindowProcessor
>>> from streamspark.dataframe.windows.aggregations import Count, Sum
>>> from streamspark.state.store import KeyedStateStore
>>> tw = TimeWindowProcessor("w", Aggregation({"n": Count(), "s": Sum("x")}, {}, single=False), 10)
>>> store = KeyedStateStore()
>>> records = [({"x": 1}, b"k", 3), ({"x": 2}, b"k", 7), ({"x": 5}, b"k", 12)]
>>> actions = ColumnarTimeWindow.for_processor(tw).plan(records, store)
>>> actions
[(2, [('emit', {'n': 2, 's': 3, 'start': 0, 'end': 10})])]
"""

from __future__ import annotations

import itertools
from typing import Any, Optional

import numpy as np
import pandas as pd

from .aggregations import Count, Max, Mean, Min, Sum
from ._process import TimeWindowProcessor, WindowStore

__all__ = ("ColumnarTimeWindow",)

#: the aggregators the columnar path computes (exact types: a subclass may change the behaviour)
_SUPPORTED = (Count, Sum, Mean, Max, Min)
#: integers (and sums of them, and stored sums) up to this magnitude stay exact in float64
_EXACT = 2**52

#: per record index: ("late", (start, end, late_by)) and ("emit", result) actions, in the
#: order the general path performs them
Actions = list[tuple[int, list[tuple[str, Any]]]]


class ColumnarTimeWindow:
    """The columnar computation of one :class:`TimeWindowProcessor` in ``.final()`` mode."""

    def __init__(self, processor: TimeWindowProcessor) -> None:
        self.processor = processor
        self.duration = processor.duration_ms
        self.step = processor.step_ms or processor.duration_ms
        self.grace = processor.grace_ms
        self.aggregators = list(processor.aggregation.aggregators.items())  # (state key, (output name, agg))

    @classmethod
    def for_processor(cls, processor: Any, emit: str = "final") -> Optional["ColumnarTimeWindow"]:
        """The columnar form of ``processor``, or None when only the general path applies."""
        if type(processor) is not TimeWindowProcessor or emit != "final":
            return None
        if processor.clock.by_partition or processor.idle_ms is not None:
            return None
        if processor.has_triggers:  # before_update/after_update see every record
            return None
        aggregation = processor.aggregation
        if aggregation.collect or not aggregation.aggregate:
            return None
        if not all(type(agg) in _SUPPORTED for _, agg in aggregation.aggregators.values()):
            return None
        return cls(processor)

    # ------------------------------------------------------------------------------------
    def plan(self, records: list[tuple[Any, ...]], store: WindowStore) -> Optional[Actions]:
        """Apply ``records`` (``(value, key, timestamp, ...)`` in processing order, keys not None)
        to ``store`` and return what to do per record; None (no window data written) when the
        batch needs the general path."""
        n = len(records)
        if not n:
            return []
        stamps = [r[2] for r in records]
        if any(type(t) is not int or not -_EXACT < t < _EXACT for t in stamps):
            return None
        ts = np.fromiter(stamps, dtype=np.int64, count=n)
        columns = self._columns(records)
        if columns is None:
            return None

        # keys in order of first appearance, and their stored window data
        keys = [r[1] for r in records]
        if all(k.__class__ is bytes for k in keys):
            slots = keys
        else:
            slots = [k if k.__class__ is bytes else _scope(k) for k in keys]
        codes, _ = pd.factorize(np.array(slots, dtype=object))
        kidx = codes.astype(np.int64, copy=False)
        _, first_seen = np.unique(kidx, return_index=True)
        key_objs = [keys[i] for i in first_seen.tolist()]
        name = self.processor.name
        datas = [store.window_data(name, key) for key in key_objs]
        nkeys = len(datas)

        # event time: each key's running maximum, in record order
        first_latest = np.fromiter(((d.get("latest") or 0) for d in datas), dtype=np.int64, count=nkeys)
        order = np.lexsort((np.arange(n), kidx))  # by key, then record order
        sorted_keys = kidx[order]
        latest_sorted = ts[order].copy()
        seg_starts = np.flatnonzero(np.r_[True, sorted_keys[1:] != sorted_keys[:-1]])
        for lo, hi in zip(seg_starts, np.r_[seg_starts[1:], n]):
            np.maximum.accumulate(latest_sorted[lo:hi], out=latest_sorted[lo:hi])
        latest_sorted = np.maximum(latest_sorted, first_latest[sorted_keys])
        latest = np.empty(n, dtype=np.int64)
        latest[order] = latest_sorted
        max_expired_end = latest - self.grace
        threshold = max_expired_end - self.duration  # max_expired_start per record

        # the windows of every record, oldest first (as window_ranges gives them)
        first = ts - ts % self.step
        pair_rec, pair_start = [], []
        for j in range(-(-self.duration // self.step) + 1):
            candidates = first - j * self.step
            valid = (candidates > ts - self.duration) & (candidates >= 0)
            pair_rec.append(np.flatnonzero(valid))
            pair_start.append(candidates[valid])
        prec = np.concatenate(pair_rec)
        pstart = np.concatenate(pair_start)
        by_record = np.lexsort((pstart, prec))
        prec, pstart = prec[by_record], pstart[by_record]
        late = pstart <= threshold[prec]
        arec, astart = prec[~late], pstart[~late]

        # every window: stored ones of these keys, then new ones
        old_k, old_s, old_states = [], [], []
        for k, data in enumerate(datas):
            for start, entry in (data.get("windows") or {}).items():
                old_k.append(k)
                old_s.append(start)
                old_states.append(entry[1])
        wk = np.concatenate([np.asarray(old_k, dtype=np.int64), kidx[arec]])
        ws = np.concatenate([np.asarray(old_s, dtype=np.int64), astart])
        if not len(ws):
            wid_all = np.zeros(0, dtype=np.int64)
            uk = us = wid_all
        else:
            _, first_at, wid_all = np.unique(np.stack([wk, ws], axis=1), axis=0, return_index=True, return_inverse=True)
            wid_all = wid_all.reshape(-1)
            uk, us = wk[first_at], ws[first_at]
        nw = len(uk)
        n_old = len(old_k)
        wid_old, wid_acc = wid_all[:n_old], wid_all[n_old:]

        # which record closes each window: the first of its key whose threshold reaches the start
        closes_at = np.full(nw, -1, dtype=np.int64)
        if nw:
            thr_sorted = threshold[order]
            ranks = np.unique(np.concatenate([thr_sorted, us]), return_inverse=True)[1].reshape(-1)
            span = int(ranks.max()) + 2
            composite = sorted_keys * span + ranks[:n]
            pos = np.searchsorted(composite, uk * span + ranks[n:], side="left")
            seg_end = np.searchsorted(sorted_keys, uk, side="right")
            closed = pos < seg_end
            closes_at[closed] = order[pos[closed]]

        aggregated = self._aggregate(columns, arec, wid_acc, wid_old, old_states, nw)
        if aggregated is None:
            return None
        states, results = aggregated

        # write the state back: open windows stay (updated), closed ones go
        for data in datas:
            data["windows"] = {}
        key_last = np.full(nkeys, np.iinfo(np.int64).min, dtype=np.int64)
        np.maximum.at(key_last, kidx, latest)
        for data, last in zip(datas, key_last.tolist()):
            data["latest"] = last
        state_keys = [sk for sk, _ in self.aggregators]
        starts: list[int] = us.tolist()
        open_w = np.flatnonzero(closes_at < 0).tolist()
        owners = uk.tolist()
        for w in open_w:
            start = starts[w]
            datas[owners[w]]["windows"][start] = [start + self.duration, {sk: states[sk][w] for sk in state_keys}]
        for data in datas:  # the general path keeps creation order; nothing depends on it
            if len(data["windows"]) > 1:
                data["windows"] = dict(sorted(data["windows"].items()))

        # per record: late reports (window order), then the windows it closes (start order)
        actions: dict[int, list[tuple[str, Any]]] = {}
        if late.any():
            for pr, ps in zip(prec[late].tolist(), pstart[late].tolist()):
                actions.setdefault(pr, []).append(("late", (ps, ps + self.duration, int(max_expired_end[pr] - ts[pr]))))
        closed_w = np.flatnonzero(closes_at >= 0)
        closed_w = closed_w[np.lexsort((us[closed_w], closes_at[closed_w]))]
        names = list(results)
        duration = self.duration
        closed_l = closed_w.tolist()
        if self.processor.aggregation.single:
            values = results[names[0]]
            emitted = [{"start": starts[w], "end": starts[w] + duration, "value": values[w]} for w in closed_l]
        else:
            rows = list(zip(*(results[name] for name in names)))
            emitted = [dict(zip(names, rows[w]), start=starts[w], end=starts[w] + duration) for w in closed_l]
        if not actions:  # no late records: the outputs alone, grouped by the record closing them
            return [
                (at, [("emit", r) for _, r in group])
                for at, group in itertools.groupby(zip(closes_at[closed_w].tolist(), emitted), key=lambda e: e[0])
            ]
        for at, result in zip(closes_at[closed_w].tolist(), emitted):
            todo = actions.get(at)
            if todo is None:
                actions[at] = [("emit", result)]
            else:
                todo.append(("emit", result))
        return sorted(actions.items())

    # ------------------------------------------------------------------------------------
    def _columns(self, records: list[tuple[Any, ...]]) -> Optional[dict[Optional[str], list[Any]]]:
        """The picked value of every aggregated column per record (None: general path)."""
        columns: dict[Optional[str], list[Any]] = {}
        for _, (_, agg) in self.aggregators:
            column = agg.column  # type: ignore[attr-defined]  # built-in aggregators only
            if column in columns:
                continue
            if column is None:
                columns[None] = [r[0] for r in records]
            else:
                values = [r[0] for r in records]
                if any(v.__class__ is not dict for v in values):
                    return None
                columns[column] = [v.get(column) for v in values]
        return columns

    def _aggregate(
        self,
        columns: dict[Optional[str], list[Any]],
        arec: np.ndarray,
        wid_acc: np.ndarray,
        wid_old: np.ndarray,
        old_states: list[dict[str, Any]],
        nw: int,
    ) -> Optional[tuple[dict[str, list[Any]], dict[str, list[Any]]]]:
        """Every window's new state and result per aggregation, as ``({state key: [per window]},
        {output name: [per window]})`` (None: the batch needs the general path)."""
        states: dict[str, list[Any]] = {}
        results: dict[str, list[Any]] = {}
        old_w = wid_old.tolist()
        for state_key, (name, agg) in self.aggregators:
            picked = columns[agg.column]  # type: ignore[attr-defined]  # built-in aggregators only
            kind = type(agg)
            present = [s[state_key] if state_key in s else agg.initialize() for s in old_states]
            sel = [picked[i] for i in arec.tolist()]
            nonnull = np.fromiter((v is not None for v in sel), dtype=bool, count=len(sel))
            wids = wid_acc[nonnull]
            vals = [v for v in sel if v is not None]
            counts = np.bincount(wids, minlength=nw)
            if kind is Count:
                base = np.zeros(nw, dtype=np.int64)
                if old_w:
                    if any(o.__class__ is not int for o in present):
                        return None
                    base[wid_old] = present
                states[state_key] = results[name] = (base + counts).tolist()
                continue
            types = {v.__class__ for v in vals}
            if not types <= {int, float}:
                return None
            x = np.asarray(vals, dtype=np.float64) if vals else np.zeros(0)
            is_float = np.fromiter((v.__class__ is float for v in vals), dtype=bool, count=len(vals))
            if int in types:
                ints = np.abs(x[~is_float])
                if ints.max() >= _EXACT or ints.sum() >= _EXACT:
                    return None
            if kind is Sum or kind is Mean:
                old_totals = [o[0] for o in present] if kind is Mean else present
                if not all(_exact_number(o) for o in old_totals):
                    return None
                # in record order, starting from the stored value: the general path's additions
                totals = np.bincount(
                    np.concatenate([wid_old, wids]),
                    weights=np.concatenate([np.asarray(old_totals, dtype=np.float64), x]),
                    minlength=nw,
                )
                if kind is Mean:
                    old_n = np.zeros(nw, dtype=np.int64)
                    if old_w:
                        old_n[wid_old] = [o[1] for o in present]
                    n = old_n + counts
                    totals_l, n_l = totals.tolist(), n.tolist()
                    states[state_key] = list(zip(totals_l, n_l))
                    means = np.divide(totals, n, out=np.zeros(nw), where=n > 0).tolist()
                    results[name] = [m if c else None for m, c in zip(means, n_l)]
                    continue
                # Sum: an int while only ints were added to an int
                as_float = np.zeros(nw, dtype=bool)
                as_float[wids[is_float]] = True
                if old_w:
                    as_float[wid_old] |= np.fromiter((o.__class__ is float for o in present), dtype=bool, count=len(present))
                totals_l = totals.tolist()
                sums = [t if f else int(t) for t, f in zip(totals_l, as_float.tolist())]
                states[state_key] = results[name] = sums
                continue
            # Max / Min: the kept value is the first one (stored value first, then records in
            # order) that equals the extreme: later equal values (1 after 1.0, -0.0 after 0.0)
            # do not replace it, as in the general path
            olds_present = [o for o in present if o is not None]
            if not all(_exact_number(o) for o in olds_present):
                return None
            ox = np.asarray(olds_present, dtype=np.float64) if olds_present else np.zeros(0)
            if np.isnan(x).any() or np.isnan(ox).any():
                return None
            maximum = kind is Max
            best = np.full(nw, -np.inf if maximum else np.inf)
            ufunc = np.maximum if maximum else np.minimum
            ufunc.at(best, wids, x)
            with_old = [(w, o) for w, o in zip(old_w, present) if o is not None]
            ufunc.at(best, np.asarray([w for w, _ in with_old], dtype=np.int64), ox)
            best_l = best.tolist()
            kept: list[Any] = [None] * nw
            for w, o in with_old:
                if o == best_l[w]:
                    kept[w] = o
            hits = np.flatnonzero(x == best[wids])
            hit_windows, first = np.unique(wids[hits], return_index=True)
            for w, j in zip(hit_windows.tolist(), hits[first].tolist()):
                if kept[w] is None:
                    kept[w] = vals[j]
            states[state_key] = results[name] = kept
        return states, results


def _scope(key: Any) -> Any:
    from ...state.store import scope_key

    return scope_key(key)


def _exact_number(value: Any) -> bool:
    """An int or float the float64 arithmetic here reproduces exactly (ints below 2^52)."""
    return value.__class__ is float or (value.__class__ is int and abs(value) < _EXACT)
