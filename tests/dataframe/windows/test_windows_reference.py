"""Tumbling, hopping, count and session windows through ``sdf.test`` (no Spark), on cases where
streamspark once differed from Quix Streams 3.28.1. Every expected output (and every update
callback call) was recorded from Quix Streams 3.28.1 running the same records; a differential
audit of several thousand random cases found these."""

from __future__ import annotations

from typing import Any, Callable

import pytest

from streamspark.dataframe import StreamingDataFrame
from streamspark.dataframe.windows import Collect, Sum
from streamspark.models import MessageContext, Topic

Records = list[tuple[Any, str, int]]
#: per record: the ``(value, key, timestamp)`` outputs, or the exception type it raises
Expected = list[Any]


def _run(build: Callable[[StreamingDataFrame], StreamingDataFrame], records: Records) -> list[Any]:
    sdf = build(StreamingDataFrame(Topic("t")))
    got: list[Any] = []
    for offset, (value, key, ts) in enumerate(records):
        ctx = MessageContext(topic="t", partition=0, offset=offset, key=key.encode(), timestamp=ts)
        try:
            out = sdf.test(value, key=key.encode(), timestamp=ts, ctx=ctx)
        except Exception as exc:  # noqa: BLE001 - the recorded outcome is the exception type
            got.append(type(exc))
            break
        got.append([(v, k.decode(), t) for v, k, t, _ in out])
    return got


def _window(start: int, end: int, value: Any) -> dict[str, Any]:
    return {"start": start, "end": end, "value": value}


def test_hopping_collect_keeps_items_of_windows_an_update_callback_closed() -> None:
    """A record whose every window ``after_update`` closes, at the same time as an older window
    closes by event time: its collected item stays, and the windows reopened over it by the
    next record collect it again (the key had no open window left in between)."""
    calls: list[tuple[Any, Any, int]] = []

    def after(collected: Any, value: Any, key: Any, ts: int, headers: Any) -> bool:
        calls.append((list(collected), value, ts))
        return bool(value == 1)

    got = _run(
        lambda sdf: sdf.hopping_window(3, 1, after_update=after).collect().final(),
        [(8, "a", 0), (1, "a", 10), (2, "a", 11), (4, "a", 30)],
    )
    assert got == [
        [],
        [(_window(0, 3, [8]), "a", 0), (_window(8, 11, [1]), "a", 8)]
        + [(_window(9, 12, [1]), "a", 9), (_window(10, 13, [1]), "a", 10)],
        [],
        [(_window(9, 12, [1, 2]), "a", 9), (_window(10, 13, [1, 2]), "a", 10), (_window(11, 14, [2]), "a", 11)],
    ]
    assert calls == [
        ([8], 8, 0),
        ([1], 1, 10),
        ([1], 1, 10),
        ([1], 1, 10),
        ([1, 2], 2, 11),
        ([1, 2], 2, 11),
        ([2], 2, 11),
        ([4], 4, 30),
        ([4], 4, 30),
        ([4], 4, 30),
    ]


def test_session_column_collector_fails_on_the_record_without_the_column() -> None:
    """A column collector reads its column when the record arrives: a record that is not a
    mapping raises TypeError on that record, not later when its session closes."""
    got = _run(
        lambda sdf: sdf.session_window(5).agg(cx=Collect("x"), cy=Collect("y")).final(),
        [({"x": 1, "y": 0}, "a", 1), (None, "a", 3), ({"x": 2, "y": 1}, "a", 4)],
    )
    assert got == [[], TypeError]


def test_session_column_collectors_of_merged_sessions() -> None:
    """Column collectors of a session emit their columns in timestamp order, across the two
    sessions a bridging record merged."""
    got = _run(
        lambda sdf: sdf.session_window(5).agg(cx=Collect("x"), cy=Collect("y")).final(),
        [({"x": 1, "y": 0}, "a", 1), ({"x": 2, "y": 9}, "a", 10), ({"x": 4, "y": 1}, "a", 6), ({"x": 8, "y": 2}, "a", 40)],
    )
    assert got == [[], [], [], [({"cx": [1, 4, 2], "cy": [0, 1, 9], "start": 1, "end": 11}, "a", 1)]]


# (name, count, step, aggregation, records, expected): hopping count windows whose step is at
# least their count. Quix Streams keeps the items of every window after the key's first in its
# collection (it deletes only their last position) and a closing window collects them again,
# position by position: a defect of the reference, reproduced.
STEPS_APART: list[tuple[str, int, int, str, Records, Expected]] = [
    (
        "step == count",
        2,
        2,
        "collect",
        [(1, "a", 7), (2, "a", 1), (4, "a", 10), (8, "a", 14), (16, "a", 16), (32, "a", 17), (64, "a", 16), (128, "a", 16)],
        [
            [],
            [(_window(1, 7, [1, 2]), "a", 1)],
            [],
            [(_window(10, 14, [4, 8]), "a", 10)],
            [],
            [(_window(16, 17, [4, 16, 32]), "a", 16)],
            [],
            [(_window(16, 16, [4, 16, 64, 128]), "a", 16)],
        ],
    ),
    (
        "step > count, with aggregations and another key",
        3,
        5,
        "multi",
        [({"x": i, "y": i - 1}, "b" if i == 2 else "a", i) for i in range(1, 11)],
        [
            [],
            [],
            [],
            [({"s": 8, "cx": [1, 3, 4], "start": 1, "end": 4}, "a", 1)],
            [],
            [],
            [({"s": 18, "cx": [5, 6, 7], "start": 5, "end": 7}, "a", 5)],
            [],
            [],
            [({"s": 27, "cx": [5, 8, 6, 9, 10], "start": 8, "end": 10}, "a", 8)],
        ],
    ),
]


@pytest.mark.parametrize("name,count,step,aggregation,records,expected", STEPS_APART, ids=[c[0] for c in STEPS_APART])
def test_hopping_count_windows_steps_apart(
    name: str, count: int, step: int, aggregation: str, records: Records, expected: Expected
) -> None:
    def build(sdf: StreamingDataFrame) -> StreamingDataFrame:
        windows = sdf.hopping_count_window(count, step)
        if aggregation == "collect":
            return windows.collect().final()
        return windows.agg(s=Sum("x"), cx=Collect("x")).final()

    assert _run(build, records) == expected
