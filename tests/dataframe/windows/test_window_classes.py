"""The classes the window methods return: windows.base/time_based/sliding/count_based."""

from __future__ import annotations

from datetime import timedelta

import pytest

from streamspark.dataframe import StreamingDataFrame
from streamspark.dataframe.windows import Count, Mean, Sum
from streamspark.dataframe.windows.base import CollectorInCurrentWindow, Window, get_window_ranges
from streamspark.dataframe.windows.count_based import CountWindow
from streamspark.dataframe.windows.sliding import SlidingWindow
from streamspark.dataframe.windows.time_based import SessionWindow, TimeWindow
from streamspark.models import Topic
from streamspark.state.store import KeyedStateStore


def _sdf() -> StreamingDataFrame:
    return StreamingDataFrame(Topic("t"))


@pytest.mark.parametrize(
    ("make", "cls"),
    [
        (lambda sdf: sdf.tumbling_window(10).sum(), TimeWindow),
        (lambda sdf: sdf.hopping_window(10, 5).agg(n=Count()), TimeWindow),
        (lambda sdf: sdf.sliding_window(10).mean(), SlidingWindow),
        (lambda sdf: sdf.session_window(10).count(), SessionWindow),
        (lambda sdf: sdf.tumbling_count_window(3).max(), CountWindow),
        (lambda sdf: sdf.hopping_count_window(3, 1).min(), CountWindow),
        (lambda sdf: sdf.sliding_count_window(3).collect(), CountWindow),
    ],
)
def test_each_window_method_returns_its_reference_class(make, cls):
    window = make(_sdf())
    assert type(window) is cls
    assert isinstance(window, Window)


def test_sliding_and_session_windows_are_time_windows():
    assert isinstance(_sdf().sliding_window(10).sum(), TimeWindow)
    assert isinstance(_sdf().session_window(10).sum(), TimeWindow)
    assert not isinstance(_sdf().tumbling_count_window(2).sum(), TimeWindow)


def test_the_window_base_class_is_abstract():
    with pytest.raises(TypeError):
        Window(None, None, "w")  # type: ignore[abstract,arg-type]


def test_time_windows_emit_as_before_through_the_classes():
    window = _sdf().tumbling_window(timedelta(milliseconds=10), grace_ms=0).agg(total=Sum("x"), avg=Mean("x"))
    sdf = window.final(closing_strategy="partition")
    out = [sdf.test({"x": x}, timestamp=t) for x, t in ((1, 1), (3, 5), (5, 12))]
    assert out == [[], [], [({"start": 0, "end": 10, "total": 4, "avg": 2.0}, b"key", 0, None)]]


def test_close_idle_after_is_keyword_only():
    window = _sdf().tumbling_window(10).sum()
    with pytest.raises(TypeError):
        window.final("key", 1000)  # type: ignore[misc]
    assert isinstance(window.final("key", close_idle_after=timedelta(seconds=1)), StreamingDataFrame)
    with pytest.raises(ValueError, match="positive"):
        window.final(close_idle_after=0)


def test_count_windows_close_by_key_only_and_current_refuses_collectors():
    with pytest.raises(TypeError, match="closing_strategy"):
        _sdf().tumbling_count_window(2).sum().final("partition")  # type: ignore[arg-type]
    with pytest.raises(CollectorInCurrentWindow):
        _sdf().tumbling_count_window(2).collect().current()


def test_process_window_runs_a_window_over_a_given_store():
    window = _sdf().tumbling_count_window(2).sum()
    store = KeyedStateStore()
    assert window.process_window(1, b"k", 10, store) == ([(b"k", {"start": 10, "end": 10, "value": 1})], [])
    updated, expired = window.process_window(2, b"k", 20, store)
    assert expired == [(b"k", {"start": 10, "end": 20, "value": 3})]
    assert window.process_window(5, b"other", 30, store)[1] == []


def test_sliding_process_window_emits_the_expired_windows_of_the_key():
    window = _sdf().sliding_window(10).sum()
    store = KeyedStateStore()
    window.process_window(1, b"k", 5, store)
    _, expired = window.process_window(2, b"k", 100, store)
    assert expired and all(key == b"k" for key, _ in expired)
    assert {w["value"] for _, w in expired} == {1}


@pytest.mark.parametrize(
    ("ts", "duration", "step", "expected"),
    [
        (25, 10, None, [(20, 30)]),
        (25, 10, 5, [(20, 30), (25, 35)]),
        (3, 10, 5, [(0, 10)]),
        (0, 10, 2, [(0, 10)]),
    ],
)
def test_get_window_ranges(ts, duration, step, expected):
    assert list(get_window_ranges(ts, duration, step)) == expected
