"""Window semantics, table-driven, through ``sdf.test`` (no Spark): each case is a sequence of
(value, key, timestamp) events and the records expected after each one."""

from __future__ import annotations

import logging
from datetime import timedelta

import pytest

from streamspark.dataframe import StreamingDataFrame
from streamspark.dataframe.windows import (
    Aggregator,
    Collect,
    Collector,
    Count,
    Earliest,
    First,
    Last,
    Latest,
    Max,
    Mean,
    Min,
    Reduce,
    Sum,
)
from streamspark.dataframe.exceptions import InvalidOperation
from streamspark.exceptions import InvalidTopology
from streamspark.models import MessageContext, Topic


def sdf():
    return StreamingDataFrame(Topic("w"))


def run(pipeline, events, partition=0):
    """Feed events; return, per event, the list of (value, key, timestamp) produced."""
    out = []
    for i, (value, key, ts) in enumerate(events):
        ctx = MessageContext(key=key, topic="w", partition=partition, offset=i, size=0, timestamp=ts, headers=None)
        out.append([(v, k, t) for v, k, t, _ in pipeline.test(value, key=key, timestamp=ts, ctx=ctx)])
    return out


def w(start, end, value):
    return {"start": start, "end": end, "value": value}


K, K2 = b"k", b"k2"

CASES = {
    "tumbling current: every update, timestamp = window start": (
        lambda: sdf().tumbling_window(10).sum().current(),
        [(1, K, 1), (2, K, 5), (3, K, 12)],
        [[(w(0, 10, 1), K, 0)], [(w(0, 10, 3), K, 0)], [(w(10, 20, 3), K, 10)]],
    ),
    "tumbling final: a window closes when event time reaches its end; later records are late": (
        lambda: sdf().tumbling_window(10).sum().final(),
        [(1, K, 1), (2, K, 5), (3, K, 9), (4, K, 10), (5, K, 8), (6, K, 19), (7, K, 20)],
        [[], [], [], [(w(0, 10, 6), K, 0)], [], [], [(w(10, 20, 10), K, 10)]],
    ),
    "tumbling grace: out-of-order records inside the grace period still count": (
        lambda: sdf().tumbling_window(10, grace_ms=5).sum().final(),
        [(1, K, 1), (3, K, 14), (4, K, 8), (5, K, 15)],
        [[], [], [], [(w(0, 10, 5), K, 0)]],
    ),
    "tumbling keys are independent (closing by key)": (
        lambda: sdf().tumbling_window(10).count().final(),
        [(1, K, 1), (1, K2, 100), (1, K, 5), (1, K, 10)],
        [[], [], [], [(w(0, 10, 2), K, 0)]],
    ),
    "closing by partition: any key's time closes every key's windows": (
        lambda: sdf().tumbling_window(10).count().final(closing_strategy="partition"),
        [(1, K, 1), (1, K2, 3), (1, K2, 100), (1, K, 5)],
        [[], [], [(w(0, 10, 1), K, 0), (w(0, 10, 1), K2, 0)], []],
    ),
    "closing strategy names in any letter case, as Quix Streams takes them": (
        lambda: sdf().tumbling_window(10).count().final(closing_strategy="Partition"),
        [(1, K, 1), (1, K2, 3), (1, K2, 100), (1, K, 5)],
        [[], [], [(w(0, 10, 1), K, 0), (w(0, 10, 1), K2, 0)], []],
    ),
    "closing by partition: keys close in the order they opened windows (not key order)": (
        lambda: sdf().tumbling_window(10).count().final(closing_strategy="partition"),
        [(1, K2, 1), (1, K, 2), (1, b"k3", 15)],
        [[], [], [(w(0, 10, 1), K2, 0), (w(0, 10, 1), K, 0)]],
    ),
    "closing by partition: only keys with due windows close, each once": (
        lambda: sdf().tumbling_window(10).count().final(closing_strategy="partition"),
        [(1, K, 1), (1, K2, 15), (1, K, 16), (1, K2, 25), (1, K, 31)],
        [[], [(w(0, 10, 1), K, 0)], [], [(w(10, 20, 1), K, 10), (w(10, 20, 1), K2, 10)], [(w(20, 30, 1), K2, 20)]],
    ),
    "hopping current: every window containing the record, oldest first": (
        lambda: sdf().hopping_window(10, 5).sum().current(),
        [(1, K, 7), (2, K, 12)],
        [[(w(0, 10, 1), K, 0), (w(5, 15, 1), K, 5)], [(w(5, 15, 3), K, 5), (w(10, 20, 2), K, 10)]],
    ),
    "hopping final: overlapping windows close one by one": (
        lambda: sdf().hopping_window(10, 5).sum().final(),
        [(1, K, 7), (2, K, 12), (4, K, 16), (8, K, 30)],
        [[], [(w(0, 10, 1), K, 0)], [(w(5, 15, 3), K, 5)], [(w(10, 20, 6), K, 10), (w(15, 25, 4), K, 15)]],
    ),
    "hopping: a record late for one window still counts in the open one": (
        lambda: sdf().hopping_window(10, 5).sum().final(),
        [(1, K, 12), (2, K, 9), (4, K, 20)],
        [[], [], [(w(5, 15, 3), K, 5), (w(10, 20, 1), K, 10)]],
    ),
    # as Quix Streams computes it: the record at 20 made the window of 12 go (a window is kept
    # only back to the latest window before a new record), so the out-of-order record at 15
    # starts its window [5, 15] afresh, without the 2 of the record at 12
    "sliding current: the record's window and the later windows containing it": (
        lambda: sdf().sliding_window(10, grace_ms=5).sum().current(),
        [(1, K, 5), (2, K, 12), (3, K, 20), (4, K, 15)],
        [[(w(0, 5, 1), K, 0)], [(w(2, 12, 3), K, 2)], [(w(10, 20, 5), K, 10)], [(w(5, 15, 4), K, 5), (w(10, 20, 9), K, 10)]],
    ),
    "sliding: an out-of-order record is late for its own closed window, counted in open ones": (
        lambda: sdf().sliding_window(10).sum().current(),
        [(1, K, 5), (2, K, 12), (3, K, 20), (4, K, 15)],
        [[(w(0, 5, 1), K, 0)], [(w(2, 12, 3), K, 2)], [(w(10, 20, 5), K, 10)], [(w(10, 20, 9), K, 10)]],
    ),
    "sliding final: inclusive ends, each window once": (
        lambda: sdf().sliding_window(10).sum().final(),
        [(1, K, 5), (2, K, 12), (3, K, 20), (4, K, 40), (5, K, 41)],
        [[], [(w(0, 5, 1), K, 0)], [(w(2, 12, 3), K, 2)], [(w(10, 20, 5), K, 10)], [(w(30, 40, 4), K, 30)]],
    ),
    "sliding edges: a record exactly duration before another is in its window": (
        lambda: sdf().sliding_window(10).count().current(),
        [(1, K, 10), (1, K, 20), (1, K, 21)],
        [[(w(0, 10, 1), K, 0)], [(w(10, 20, 2), K, 10)], [(w(11, 21, 2), K, 11)]],
    ),
    "sliding late: a record before the watermark is dropped": (
        lambda: sdf().sliding_window(10).count().final(),
        [(1, K, 30), (1, K, 19), (1, K, 20)],
        [[], [], []],
    ),
    "tumbling count window": (
        lambda: sdf().tumbling_count_window(3).sum().final(),
        [(1, K, 5), (2, K, 3), (3, K, 9), (4, K, 10), (5, K, 11), (6, K, 12), (7, K, 13)],
        [[], [], [(w(3, 9, 6), K, 3)], [], [], [(w(10, 12, 15), K, 10)], []],
    ),
    "tumbling count window current": (
        lambda: sdf().tumbling_count_window(2).sum().current(),
        [(1, K, 1), (2, K, 2), (3, K, 3)],
        [[(w(1, 1, 1), K, 1)], [(w(1, 2, 3), K, 1)], [(w(3, 3, 3), K, 3)]],
    ),
    "hopping count window": (
        lambda: sdf().hopping_count_window(3, 2).sum().final(),
        [(1, K, 1), (2, K, 2), (3, K, 3), (4, K, 4), (5, K, 5), (6, K, 6)],
        [[], [], [(w(1, 3, 6), K, 1)], [], [(w(3, 5, 12), K, 3)], []],
    ),
    "sliding count window": (
        lambda: sdf().sliding_count_window(2).sum().current(),
        [(1, K, 1), (2, K, 2), (3, K, 3)],
        [[(w(1, 1, 1), K, 1)], [(w(1, 2, 3), K, 1), (w(2, 2, 2), K, 2)], [(w(2, 3, 5), K, 2), (w(3, 3, 3), K, 3)]],
    ),
    "session: records at most the gap apart form one session [first, last + 1)": (
        lambda: sdf().session_window(10).count().final(),
        [(1, K, 0), (1, K, 5), (1, K, 14), (1, K, 30), (1, K, 60)],
        [[], [], [], [], [(w(0, 15, 3), K, 0), (w(30, 31, 1), K, 30)]],
    ),
    "session: a record exactly the gap after the last one joins; closing waits 2 gaps + grace": (
        lambda: sdf().session_window(10).count().final(),
        [(1, K, 0), (1, K, 10), (1, K, 21), (1, K, 45)],
        [[], [], [], [(w(0, 11, 2), K, 0), (w(21, 22, 1), K, 21)]],
    ),
    "session merge: a record bridging two open sessions merges them": (
        lambda: sdf().session_window(10, grace_ms=10).sum().current(),
        [(1, K, 0), (2, K, 18), (4, K, 9)],
        [[(w(0, 1, 1), K, 0)], [(w(18, 19, 2), K, 18)], [(w(0, 19, 7), K, 0)]],
    ),
    "session split by keys, grace keeps a session open": (
        lambda: sdf().session_window(10, grace_ms=5).count().final(),
        [(1, K, 0), (1, K2, 0), (1, K, 12), (1, K, 8), (1, K, 30), (1, K, 50)],
        [[], [], [], [], [], [(w(0, 13, 3), K, 0)]],
    ),
    "session closing by partition": (
        lambda: sdf().session_window(10).count().final(closing_strategy="partition"),
        [(1, K, 0), (1, K2, 5), (1, K2, 30), (1, K, 12)],
        [[], [], [(w(0, 1, 1), K, 0), (w(5, 6, 1), K2, 5)], []],
    ),
    "session late record is dropped": (
        lambda: sdf().session_window(10).count().final(),
        [(1, K, 100), (1, K, 50), (1, K, 200)],
        [[], [], [(w(100, 101, 1), K, 100)]],
    ),
}


@pytest.mark.parametrize("name", list(CASES))
def test_window_semantics(name):
    build, events, expected = CASES[name]
    assert run(build(), events) == expected


def test_every_aggregation_and_custom_ones():
    class Spread(Aggregator):
        def initialize(self):
            return None

        def agg(self, old, new, timestamp):
            x = new[self.column]
            return (x, x) if old is None else (min(old[0], x), max(old[1], x))

        def result(self, value):
            return value[1] - value[0]

    class Joined(Collector):
        def result(self, items):
            return "-".join(str(i) for i in items)

    pipeline = (
        sdf()
        .tumbling_window(10)
        .agg(
            c=Count(),
            s=Sum("x"),
            m=Mean("x"),
            mx=Max("x"),
            mn=Min("x"),
            e=Earliest("x"),
            l=Latest("x"),
            f=First("x"),
            la=Last("x"),
            r=Reduce(lambda a, v: a * v["x"], lambda v: v["x"]),
            spread=Spread("x"),
            col=Collect("x"),
            joined=Joined("x"),
            all=Collect(),
        )
        .final()
    )
    events = [({"x": 3}, K, 5), ({"x": 1}, K, 2), ({"x": 2}, K, 7), ({"x": 9}, K, 20)]
    out = run(pipeline, events)
    assert out[:3] == [[], [], []]
    [(result, key, ts)] = out[3]
    assert (key, ts) == (K, 0)
    assert list(result) == ["c", "s", "m", "mx", "mn", "e", "l", "f", "la", "r", "spread", "col", "joined", "all", "start", "end"]
    assert result == {
        "c": 3,
        "s": 6,
        "m": 2.0,
        "mx": 3,
        "mn": 1,
        "e": 1,
        "l": 2,
        "f": 3,
        "la": 2,
        "r": 6,
        "spread": 2,
        "col": [1, 3, 2],
        "joined": "1-3-2",
        "all": [{"x": 1}, {"x": 3}, {"x": 2}],
        "start": 0,
        "end": 10,
    }


@pytest.mark.parametrize(
    "method, expected",
    [
        ("sum", 6),
        ("count", 3),
        ("mean", 2.0),
        ("max", 3),
        ("min", 1),
        ("collect", [1, 3, 2]),
    ],
)
def test_single_aggregations(method, expected):
    pipeline = getattr(sdf().tumbling_window(10), method)().final()
    out = run(pipeline, [(3, K, 5), (1, K, 2), (2, K, 7), (0, K, 10)])
    assert out[3] == [(w(0, 10, expected), K, 0)]


def test_reduce_and_none_values():
    pipeline = sdf().tumbling_window(10).reduce(lambda a, v: a + [v], lambda v: [v]).final()
    assert run(pipeline, [(1, K, 1), (2, K, 2), (0, K, 10)])[2] == [(w(0, 10, [1, 2]), K, 0)]
    mean = sdf().tumbling_window(10).agg(m=Mean("x"), n=Count("x")).final()
    out = run(mean, [({"x": None}, K, 1), ({"y": 1}, K, 2), ({"x": 4}, K, 3), ({"x": 0}, K, 10)])
    assert out[3] == [({"m": 4.0, "n": 1, "start": 0, "end": 10}, K, 0)]


def test_none_keys_are_ignored(caplog):
    pipeline = sdf().tumbling_window(10).count().current()
    with caplog.at_level(logging.WARNING, logger="streamspark"):
        assert pipeline.test(1, key=None, timestamp=1) == []
    assert "key is None, partition='w[0]' offset='0'." in caplog.text


def test_on_late_callback_and_logging(caplog):
    calls = []

    def on_late(value, key, ts, late_by, start, end, name, topic, partition, offset):
        calls.append((value, key, ts, late_by, start, end, name, topic, partition, offset))
        return value == "log me"

    pipeline = sdf().tumbling_window(10, name="w10", on_late=on_late).count().final()
    with caplog.at_level(logging.WARNING, logger="streamspark"):
        run(pipeline, [(1, K, 25), ("quiet", K, 3), ("log me", K, 4)])
    assert calls[0] == ("quiet", K, 3, 22, 0, 10, "w10_tumbling_window_10_count", "w", 0, 1)
    assert len(calls) == 2
    assert caplog.text.count("Skipping window processing for the closed window") == 1
    assert "late_by_ms=21" in caplog.text


@pytest.mark.parametrize(
    "define, error, message",
    [
        (lambda: sdf().tumbling_window(0), ValueError, "Window size cannot be smaller than 1ms"),
        (lambda: sdf().tumbling_window(timedelta(microseconds=400)), ValueError, "smaller than 1ms"),
        (lambda: sdf().tumbling_window(10, grace_ms=-1), ValueError, "Window grace cannot be smaller than 0ms"),
        (lambda: sdf().tumbling_window("10"), TypeError, r"Timedelta must be either .* \(duration_ms\)"),
        (lambda: sdf().tumbling_window(10, grace_ms=1.5), TypeError, r"Timedelta must be either .* \(grace_ms\)"),
        (lambda: sdf().hopping_window(10, 10), ValueError, "step size must be smaller than duration .* got 10ms"),
        (lambda: sdf().hopping_window(10, 20), ValueError, "step size must be smaller than duration"),
        (lambda: sdf().hopping_window(10, 0), ValueError, "bigger than 0ms, got 0ms"),
        (lambda: sdf().hopping_window(10, -5), ValueError, "bigger than 0ms"),
        (lambda: sdf().hopping_window(-10, 5), ValueError, "Window size cannot be smaller than 1ms"),
        (lambda: sdf().hopping_window(10, 5, grace_ms=-1), ValueError, "Window grace"),
        (lambda: sdf().sliding_window(0), ValueError, "Window size cannot be smaller than 1ms"),
        (lambda: sdf().sliding_window(10, grace_ms=-1), ValueError, "Window grace"),
        (lambda: sdf().tumbling_count_window(1), ValueError, "Window count must be greater than 1"),
        (lambda: sdf().tumbling_count_window(0), ValueError, "Window count must be greater than 1"),
        (lambda: sdf().sliding_count_window(1), ValueError, "Window count must be greater than 1"),
        (lambda: sdf().hopping_count_window(1, 1), ValueError, "Window count must be greater than 1"),
        (lambda: sdf().hopping_count_window(3, 0), ValueError, "Window step must be greater or equal to 1"),
        (lambda: sdf().tumbling_count_window("3"), TypeError, "Window count must be an int"),
        (lambda: sdf().hopping_count_window(3, 1.5), TypeError, "Window step must be an int"),
        (lambda: sdf().session_window(0), ValueError, "inactivity_gap_ms cannot be smaller than 1ms"),
        (lambda: sdf().session_window(10, grace_ms=-1), ValueError, "grace_ms cannot be smaller than 0ms"),
        (lambda: sdf().session_window("10"), TypeError, r"Timedelta must be either .* \(inactivity_gap_ms\)"),
    ],
)
def test_window_parameters_are_checked(define, error, message):
    with pytest.raises(error, match=message):
        define()


@pytest.mark.parametrize(
    "define",
    [
        lambda: sdf().hopping_window(10, 9),
        lambda: sdf().hopping_window(timedelta(seconds=1), timedelta(milliseconds=1)),
        lambda: sdf().tumbling_count_window(2),
        lambda: sdf().hopping_count_window(2, 1),
        lambda: sdf().hopping_count_window(2, 5),  # a step larger than count is allowed, as in the reference
        lambda: sdf().session_window(1),
    ],
)
def test_window_parameters_at_the_limits_are_accepted(define):
    assert define().sum() is not None


def test_hopping_count_step_larger_than_count_starts_a_window_at_the_next_record():
    pipeline = sdf().hopping_count_window(2, 3).sum().final()
    assert run(pipeline, [(1, K, 1), (2, K, 2), (3, K, 3), (4, K, 4)]) == [[], [(w(1, 2, 3), K, 1)], [], [(w(3, 4, 7), K, 3)]]


def test_collectors_need_final_and_parameters_are_checked():
    with pytest.raises(InvalidTopology, match="BaseCollectors are not supported by `current` windows"):
        sdf().tumbling_window(10).collect().current()
    with pytest.raises(InvalidOperation, match="not supported by `current` windows"):
        sdf().tumbling_window(10).agg(c=Collect()).current()
    with pytest.raises(TypeError, match="closing_strategy"):
        sdf().tumbling_window(10).sum().final(closing_strategy="topic")
    with pytest.raises(TypeError, match="key"):
        sdf().sliding_window(10).sum().final(closing_strategy="partition")
    with pytest.raises(ValueError, match="reserved"):
        sdf().tumbling_window(10).agg(start=Count())


def test_timedelta_is_rounded_to_the_millisecond():
    d = sdf().tumbling_window(timedelta(microseconds=1600), grace_ms=timedelta(microseconds=400))
    assert (d.duration_ms, d.grace_ms) == (2, 0)


def test_window_results_flow_into_later_steps():
    pipeline = sdf().tumbling_window(10).sum().final().apply(lambda r: r["value"] * 10)
    assert run(pipeline, [(1, K, 1), (2, K, 3), (0, K, 10)])[2] == [(30, K, 0)]


@pytest.mark.parametrize(
    "build, events, expected",
    [
        (lambda: sdf().tumbling_window(10).sum(), [(1, 3), (2, 5)], [w(0, 10, 3)]),
        (lambda: sdf().hopping_window(10, 5).sum(), [(1, 7)], [w(0, 10, 1), w(5, 15, 1)]),
        (lambda: sdf().sliding_window(10).sum(), [(1, 5), (2, 8)], [w(0, 5, 1), w(0, 8, 3)]),
        (lambda: sdf().tumbling_count_window(5).sum(), [(1, 5), (2, 8)], [w(5, 8, 3)]),
        (lambda: sdf().session_window(10).sum(), [(1, 5), (2, 8)], [w(5, 9, 3)]),
    ],
)
def test_closing_quiet_keys_closes_everything_open(build, events, expected):
    """The timer path (used on Spark): windows of a key quiet for close_idle_after close with
    what they hold, once."""
    from streamspark.core.stream import compose
    from streamspark.state.store import KeyedStateStore

    pipeline = build().final(close_idle_after=1000)
    store = KeyedStateStore()
    store.tickers = []
    out = []
    push = compose(pipeline._stream.root(), collect=lambda v, k, t, h: out.append(v), states=store)
    for value, ts in events:
        push(value, K, ts, None)
    [tick] = store.tickers
    assert out == []
    tick(10**13)
    assert out == expected
    tick(10**13 + 5000)
    assert out == expected  # nothing left open
    if "tumbling_window" in pipeline.stream.node.processor.name:
        push(9, K, 4, None)  # a record for the closed window is late: no second result
        tick(10**13 + 10000)
        assert out == expected
    with pytest.raises(TypeError, match="key"):
        sdf().tumbling_window(10).sum().final(closing_strategy="partition", close_idle_after=5)


def run_skipping_errors(pipeline, events):
    """Like ``run``, but a record whose processing raises gives ``"error"`` (an app skipping it)."""
    out = []
    for i, (value, key, ts) in enumerate(events):
        ctx = MessageContext(key=key, topic="w", partition=0, offset=i, size=0, timestamp=ts, headers=None)
        try:
            out.append([(v, k, t) for v, k, t, _ in pipeline.test(value, key=key, timestamp=ts, ctx=ctx)])
        except TypeError:
            out.append("error")
    return out


BAD_RECORD_CASES = {
    "tumbling": (
        lambda: sdf().tumbling_window(10).sum().final(),
        [[], [], "error", [], [(w(0, 10, 6), K, 0)]],
    ),
    "hopping": (
        lambda: sdf().hopping_window(10, 5).sum().current(),
        [
            [(w(0, 10, 1), K, 0)],
            [(w(0, 10, 3), K, 0), (w(5, 15, 2), K, 5)],
            "error",
            [(w(0, 10, 6), K, 0), (w(5, 15, 5), K, 5)],
            [(w(5, 15, 9), K, 5), (w(10, 20, 4), K, 10)],
        ],
    ),
    "sliding": (
        lambda: sdf().sliding_window(10).sum().current(),
        [[(w(0, 1, 1), K, 0)], [(w(0, 6, 3), K, 0)], "error", [(w(0, 7, 6), K, 0)], [(w(1, 11, 10), K, 1)]],
    ),
    "tumbling count": (
        lambda: sdf().tumbling_count_window(2).sum().current(),
        [[(w(1, 1, 1), K, 1)], [(w(1, 6, 3), K, 1)], "error", [(w(7, 7, 3), K, 7)], [(w(7, 11, 7), K, 7)]],
    ),
    "session": (
        lambda: sdf().session_window(6).sum().current(),
        [[(w(1, 2, 1), K, 1)], [(w(1, 7, 3), K, 1)], "error", [(w(1, 8, 6), K, 1)], [(w(1, 12, 10), K, 1)]],
    ),
}


@pytest.mark.parametrize("name", list(BAD_RECORD_CASES))
def test_a_record_whose_aggregation_raises_leaves_the_windows_as_they_were(name):
    # the record at 50 fails to aggregate: it must neither open a window nor move event time
    build, expected = BAD_RECORD_CASES[name]
    events = [(1, K, 1), (2, K, 6), ("bad", K, 50), (3, K, 7), (4, K, 11)]
    assert run_skipping_errors(build(), events) == expected


@pytest.mark.parametrize(
    "define, expected",
    [
        (lambda s: s.tumbling_window(10).sum(), "tumbling_window_10_sum"),
        (lambda s: s.tumbling_window(10, grace_ms=5, name="w").agg(n=Count()), "w_tumbling_window_10"),
        (lambda s: s.hopping_window(10, 5).collect(), "hopping_window_10_5_collect"),
        (lambda s: s.sliding_window(10).mean(), "sliding_window_10_mean"),
        (lambda s: s.tumbling_count_window(3).count(), "tumbling_count_window_count"),
        (lambda s: s.hopping_count_window(3, 1, name="q").max(), "q_hopping_count_window_max"),
        (lambda s: s.sliding_count_window(3).agg(n=Count()), "sliding_count_window"),
        (
            lambda s: s.session_window(10).reduce(lambda a, v: a + v, lambda v: v, merger=lambda a, b: a + b),
            "session_window_10_reduce",
        ),
    ],
)
def test_window_names_are_the_reference_store_names(define, expected):
    assert define(sdf()).name == expected


def test_two_windows_with_one_store_name_are_refused():
    from streamspark.state.exceptions import StoreAlreadyRegisteredError

    stream = sdf()
    stream.tumbling_window(10).sum().final()
    with pytest.raises(StoreAlreadyRegisteredError, match="provide a unique name via the `name` parameter"):
        stream.tumbling_window(10, grace_ms=5).sum().current()
    stream.tumbling_window(10, grace_ms=5, name="late").sum().current()  # another name works
    stream.tumbling_window(10).count().final()  # another aggregation too


def test_session_window_takes_the_reference_parameter_names():
    pipeline = sdf().session_window(inactivity_gap_ms=timedelta(milliseconds=10), grace_ms=0).count().final()
    assert run(pipeline, [(1, K, 0), (1, K, 10), (1, K, 40)]) == [[], [], [(w(0, 11, 2), K, 0)]]


def test_reduce_accepts_a_merger():
    window = sdf().session_window(10, grace_ms=10)
    pipeline = window.reduce(lambda a, v: a + v, lambda v: v, merger=lambda a, b: a + b).current()
    assert run(pipeline, [(1, K, 0), (2, K, 18), (4, K, 9)]) == [
        [(w(0, 1, 1), K, 0)],
        [(w(18, 19, 2), K, 18)],
        [(w(0, 19, 7), K, 0)],
    ]
    assert Reduce(lambda a, v: a + v, lambda v: v, lambda a, b: a + b).agg(None, 3, 0) == 3


class _Counter(Aggregator):
    def initialize(self):
        return 0

    def agg(self, old, new, timestamp):
        return old + 1

    def result(self, value):
        return value


@pytest.mark.parametrize(
    "define",
    [
        lambda s: s.session_window(10).reduce(lambda a, v: a + v, lambda v: v),
        lambda s: s.session_window(10).agg(n=Count(), r=Reduce(lambda a, v: a + v, lambda v: v)),
        lambda s: s.session_window(10).agg(custom=_Counter()),
    ],
)
def test_session_windows_refuse_aggregations_that_cannot_merge(define):
    with pytest.raises(InvalidOperation, match="do not implement `merge`"):
        define(sdf())


def test_merging_sessions_merges_their_aggregations_in_session_order():
    class MergingCounter(_Counter):
        def merge(self, a, b):
            return a * 100 + b

    pipeline = (
        sdf()
        .session_window(10, grace_ms=20)
        .agg(
            first=First(),
            last=Last(),
            n=MergingCounter(),
            total=Sum(),
            values=Collect(),
        )
        .final()
    )
    # 30 and 50 open two sessions; 40 bridges them (first/last follow session order, not arrival)
    events = [(2, K, 50), (1, K, 30), (3, K, 40), (0, K, 200)]
    assert run(pipeline, events)[-1] == [
        ({"first": 1, "last": 2, "n": 201, "total": 6, "values": [1, 3, 2], "start": 30, "end": 51}, K, 30)
    ]


@pytest.mark.parametrize(
    "build",
    [
        lambda: sdf().tumbling_window(10).reduce(lambda acc, v: acc + [v], lambda v: [v]).current(),
        lambda: sdf().hopping_window(10, 5).reduce(lambda acc, v: acc + [v], lambda v: [v]).current(),
        lambda: sdf().tumbling_count_window(5).reduce(lambda acc, v: acc + [v], lambda v: [v]).current(),
        lambda: sdf().sliding_window(10).reduce(lambda acc, v: acc + [v], lambda v: [v]).current(),
    ],
    ids=["tumbling", "hopping", "count", "sliding"],
)
def test_changing_an_emitted_result_leaves_the_window_as_it_was(build):
    pipeline = build().update(lambda result: result["value"].append("changed downstream"))
    out = run(pipeline, [(1, K, 21), (2, K, 22)])
    assert out[1][-1][0]["value"] == [1, 2, "changed downstream"]


def test_a_reducer_changing_its_accumulator_in_place_leaves_earlier_results_as_emitted():
    def append(acc, v):
        acc.append(v)
        return acc

    pipeline = sdf().tumbling_window(10).agg(seen=Reduce(append, lambda v: [v]), n=Count()).current()
    first, second = (out[0][0] for out in run(pipeline, [(1, K, 1), (2, K, 2)]))
    assert first == {"seen": [1], "n": 1, "start": 0, "end": 10}
    assert second == {"seen": [1, 2], "n": 2, "start": 0, "end": 10}


def test_collected_items_of_overlapping_windows_are_separate_objects():
    seen = []

    def record_then_clear(result):
        seen.append((result["start"], [dict(item) for item in result["value"]]))
        result["value"][0].clear()

    pipeline = sdf().hopping_window(10, 5).collect().final().update(record_then_clear)
    run(pipeline, [({"n": 1}, K, 7), ({"n": 2}, K, 12), ({"n": 3}, K, 30)])
    assert seen == [(0, [{"n": 1}]), (5, [{"n": 1}, {"n": 2}]), (10, [{"n": 2}])]


# --- before_update / after_update: closing a window early --------------------------------


def _triggered(window, events, closing_strategy="key", emit="final"):
    pipeline = getattr(window, emit)(closing_strategy=closing_strategy)
    return [[v for v, _, _ in produced] for produced in run(pipeline, events)]


def test_after_update_closes_the_window_with_the_record():
    seen = []

    def full(aggregated, value, key, timestamp, headers):
        seen.append((aggregated, value, key, timestamp))
        return aggregated >= 3

    window = sdf().tumbling_window(100, after_update=full).sum()
    out = _triggered(window, [(1, b"k", 1), (2, b"k", 2), (5, b"k", 3), (4, b"k", 4)])
    assert out == [
        [],
        [{"start": 0, "end": 100, "value": 3}],
        [{"start": 0, "end": 100, "value": 5}],
        [{"start": 0, "end": 100, "value": 4}],
    ]
    # the window starts afresh after each early close
    assert seen == [(1, 1, b"k", 1), (3, 2, b"k", 2), (5, 5, b"k", 3), (4, 4, b"k", 4)]


def test_before_update_closes_the_window_without_the_record():
    def on_three(aggregated, value, key, timestamp, headers):
        return value == 3

    window = sdf().tumbling_window(100, before_update=on_three).sum()
    out = _triggered(window, [(1, b"k", 1), (2, b"k", 2), (3, b"k", 3), (4, b"k", 4), (9, b"k", 150)])
    # the record that closed the window is in neither window
    assert out == [[], [], [{"start": 0, "end": 100, "value": 3}], [], [{"start": 0, "end": 100, "value": 4}]]


def test_update_callbacks_see_agg_states_collected_items_and_headers():
    seen = []

    def log(aggregated, value, key, timestamp, headers):
        seen.append((aggregated, headers))
        return False

    pipeline = (
        sdf()
        .set_headers(lambda v, k, t, h: [("h", b"1")])
        .tumbling_window(10, after_update=log)
        .agg(total=Sum(), n=Count())
        .final()
    )
    pipeline.test(2, key=b"k", timestamp=1)
    collecting = sdf().tumbling_window(10, before_update=log).collect().final()
    collecting.test(7, key=b"k", timestamp=1)
    collecting.test(8, key=b"k", timestamp=2)
    assert seen == [({"total/Sum": 2, "n/Count": 1}, [("h", b"1")]), ([], None), ([7], None)]


def test_collect_window_closed_by_after_update():
    window = sdf().hopping_window(10, 5, after_update=lambda items, *_: len(items) == 2).collect()
    out = _triggered(window, [(1, b"k", 6), (2, b"k", 7)])
    assert out == [[], [{"start": 0, "end": 10, "value": [1, 2]}, {"start": 5, "end": 15, "value": [1, 2]}]]


def test_current_emits_nothing_for_a_window_closed_by_a_callback():
    window = sdf().tumbling_window(100, after_update=lambda agg, *_: agg >= 3).sum()
    out = _triggered(window, [(1, b"k", 1), (2, b"k", 2), (1, b"k", 3)], emit="current")
    assert out == [[{"start": 0, "end": 100, "value": 1}], [], [{"start": 0, "end": 100, "value": 1}]]


def test_a_record_whose_windows_all_closed_early_leaves_the_key_event_time():
    # the record at 15 closes its window at once: the key's event time stays at 1, so the
    # record at 4 is not late and reopens [0, 10), which had expired: it is dropped unemitted
    window = sdf().tumbling_window(10, after_update=lambda agg, value, *_: value >= 5).sum()
    out = _triggered(window, [(1, b"k", 1), (5, b"k", 15), (2, b"k", 4), (7, b"k", 22)])
    assert out == [
        [],
        [{"start": 0, "end": 10, "value": 1}, {"start": 10, "end": 20, "value": 5}],
        [],
        [{"start": 20, "end": 30, "value": 7}],
    ]


def test_update_callbacks_turn_off_the_columnar_path_and_are_refused_by_sliding_windows():
    from streamspark.dataframe.windows._columnar import ColumnarTimeWindow
    from streamspark.dataframe.windows.definitions import SlidingTimeWindowDefinition

    def processor(definition):
        window = definition.sum()
        return definition._processor(window._aggregation, window.name, False)  # noqa: SLF001

    assert ColumnarTimeWindow.for_processor(processor(sdf().tumbling_window(10))) is not None
    assert ColumnarTimeWindow.for_processor(processor(sdf().tumbling_window(10, before_update=lambda *_: False))) is None
    assert ColumnarTimeWindow.for_processor(processor(sdf().hopping_window(10, 5, after_update=lambda *_: False))) is None
    with pytest.raises(ValueError, match="before_update/after_update"):
        SlidingTimeWindowDefinition(sdf(), 10, after_update=lambda *_: True)
    with pytest.raises(TypeError):
        sdf().sliding_window(10, after_update=lambda *_: True)  # type: ignore[call-arg]


def test_after_update_adds_each_record_once_to_an_aggregator_that_changes_its_state_in_place():
    def append(acc, value):
        acc.append(value)  # changes the accumulator in place
        return acc

    window = sdf().tumbling_window(100, after_update=lambda acc, *_: len(acc) == 3).reduce(append, lambda v: [v])
    out = _triggered(window, [(1, b"k", 1), (2, b"k", 2), (3, b"k", 3), (4, b"k", 4), (5, b"k", 150)])
    assert out == [[], [], [{"start": 0, "end": 100, "value": [1, 2, 3]}], [], [{"start": 0, "end": 100, "value": [4]}]]
