"""The columnar window path (a batch at a time, numpy) against the general path (record by
record), side by side on the same event sequences: same outputs in the same order, under the
same message context, same late-record reports, same state afterwards."""

from __future__ import annotations

import collections
import contextvars
import copy
import random

import pytest

from streamspark.context import current_message_context, set_message_context
from streamspark.core.stream import compose
from streamspark.dataframe import StreamingDataFrame
from streamspark.dataframe.windows import Count, Max, Mean, Min, Sum
from streamspark.models import MessageContext, Topic
from streamspark.state.store import KeyedStateStore


def _pipelines():
    def sdf():
        return StreamingDataFrame(Topic("w"))

    five = dict(n=Count(), c=Count("x"), s=Sum("x"), m=Mean("x"), hi=Max("x"), lo=Min("x"))
    return {
        "tumbling": lambda late: sdf().tumbling_window(10, on_late=late).agg(**five).final(),
        "tumbling grace": lambda late: sdf().tumbling_window(10, grace_ms=5, on_late=late).agg(**five).final(),
        "hopping uneven step": lambda late: sdf().hopping_window(10, 3, on_late=late).agg(**five).final(),
        "hopping grace": lambda late: sdf().hopping_window(20, 5, grace_ms=7, on_late=late).agg(**five).final(),
        "single sum of whole values": lambda late: (
            sdf().apply(lambda v: v.get("x")).tumbling_window(7, on_late=late).sum().final()
        ),
        "single count then a later step": lambda late: (
            sdf().tumbling_window(10, on_late=late).count().final().apply(lambda r: {**r, "twice": r["value"] * 2})
        ),
    }


def _events(seed, kinds):
    rnd = random.Random(seed)
    keys = [b"a", b"b", b"c", "str-key"]
    events, clock = [], 0
    for i in range(rnd.randint(20, 90)):
        clock += rnd.randint(0, 6)
        ts = max(0, clock - rnd.choice([0, 0, 0, 2, 9, 15, 40]))  # out of order, some late
        kind = rnd.choice(kinds)
        x = {"int": rnd.randint(-50, 50), "float": round(rnd.uniform(-5, 5), 3)}.get(kind)
        value = {"x": x, "i": i} if kind != "missing" else {"i": i}
        events.append((value, rnd.choice(keys), ts))
    return events


def _run(build, events, batches, columnar):
    """Outputs [(value, key, ts, offset of the record that produced it)], late reports, state."""
    outputs, lates = [], []

    def on_late(value, key, ts, late_by, start, end, name, topic, partition, offset):
        lates.append((value["i"] if isinstance(value, dict) else value, key, ts, late_by, start, end, offset))
        return False

    pipeline = build(on_late)
    store = KeyedStateStore()
    batched = [] if columnar else None

    def leaf(v, k, t, h):
        outputs.append((v, k, t, current_message_context.get().offset))

    push = compose(pipeline._stream.root(), collect=leaf, states=store, batched=batched)

    def replay(ctx, v, k, t, h, fn):
        set_message_context(ctx)
        fn(v, k, t, h)

    def go():
        cuts = sorted(random.Random(len(events)).sample(range(1, len(events)), batches - 1))
        for lo, hi in zip([0, *cuts], [*cuts, len(events)]):
            for offset in range(lo, hi):
                value, key, ts = events[offset]
                ctx = MessageContext(key=key, topic="w", partition=0, offset=offset, size=0, timestamp=ts, headers=None)
                set_message_context(ctx)
                push(copy.copy(value), key, ts, None)
            for window in reversed(batched or []):
                window.flush(replay)

    contextvars.copy_context().run(go)
    state = {
        scope: {k: (sorted(v.items()) if isinstance(v, dict) else v) for k, v in data.items()}
        for scope, data in store._windows.items()
    }
    used = sum(w.columnar_batches for w in batched or [])
    # repr tells 1 from 1.0, -0.0 from 0.0 and tuples from lists
    return outputs, lates, repr(sorted(state.items(), key=repr)), used


@pytest.mark.parametrize("name", list(_pipelines()))
@pytest.mark.parametrize("kinds", [("int",), ("float",), ("int", "float", "none", "missing")], ids=["ints", "floats", "mixed"])
def test_columnar_path_matches_the_general_path(name, kinds):
    build = _pipelines()[name]
    used_total = 0
    for seed in range(12):
        events = _events(seed, kinds)
        general = _run(build, events, batches=3, columnar=False)
        columnar = _run(build, events, batches=3, columnar=True)
        assert repr(columnar[:3]) == repr(general[:3]), f"seed {seed}"
        used_total += columnar[3]
        assert general[0], "the sequences close windows"
    assert used_total == 12 * 3, "every batch ran columnar"
    assert any(_run(build, _events(s, kinds), 3, False)[1] for s in range(12)), "some records are late"


def test_batches_it_cannot_model_fall_back_to_the_general_path():
    """NaN maxima, values that are not plain dicts, timestamps beyond int64: record by record."""

    def build(late):
        return StreamingDataFrame(Topic("w")).tumbling_window(10).agg(hi=Max("x")).final()

    nan = [({"x": x, "i": i}, b"k", i * 6) for i, x in enumerate([1.0, float("nan"), 2.0])]
    not_dicts = [(collections.OrderedDict(x=1, i=0), b"k", 0), ({"x": 1, "i": 1}, b"k", 12)]
    huge = [({"x": 1, "i": 0}, b"k", 2**70), ({"x": 2, "i": 1}, b"k", 2**70 + 20)]
    for events in (nan, not_dicts, huge):
        general = _run(build, events, batches=1, columnar=False)
        columnar = _run(build, events, batches=1, columnar=True)
        assert columnar[3] == 0
        assert repr(columnar[:3]) == repr(general[:3])


def test_ties_keep_the_first_value_like_the_general_path():
    """1 and 1.0, 0.0 and -0.0 compare equal: the one seen first stays (its type and sign show)."""

    def build(late):
        return StreamingDataFrame(Topic("w")).tumbling_window(10).agg(hi=Max("x"), lo=Min("x")).final()

    for xs in ([1, 1.0, 0], [1.0, 1, 0.5], [0.0, -0.0, 0], [-0.0, 0.0, 0]):
        events = [({"x": x, "i": i}, b"k", i) for i, x in enumerate(xs)] + [({"x": 5}, b"k", 30)]
        general = _run(build, events, batches=2, columnar=False)
        columnar = _run(build, events, batches=2, columnar=True)
        assert columnar[3] == 2
        assert repr(columnar[:3]) == repr(general[:3]), xs


def test_only_final_time_windows_with_builtin_aggregations_are_columnar():
    def stream_of(sdf):
        return sdf._stream.root()

    def windows_of(sdf):
        batched = []
        compose(stream_of(sdf), states=KeyedStateStore(), batched=batched)
        return len(batched)

    base = lambda: StreamingDataFrame(Topic("w"))  # noqa: E731
    assert windows_of(base().tumbling_window(10).sum().final()) == 1
    assert windows_of(base().tumbling_window(10).sum().current()) == 0
    assert windows_of(base().sliding_window(10).sum().final()) == 0
    assert windows_of(base().tumbling_window(10).collect().final()) == 0
    assert windows_of(base().tumbling_window(10).sum().final(closing_strategy="partition")) == 0
    # a branch before the window keeps it record by record (outputs would reorder across branches)
    sdf = base()
    sdf.apply(lambda v: v)
    sdf = sdf.tumbling_window(10).sum().final()
    assert windows_of(sdf) == 0
