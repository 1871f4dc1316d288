"""Sliding windows on records out of order, through ``sdf.test`` (no Spark): each case's
expected outputs and ``on_late`` calls are those Quix Streams 3.28.1 gives for the same
records (recorded from it), including where its algorithm drops or keeps a record in ways a
window's definition alone would not say."""

from __future__ import annotations

from typing import Any

import pytest

from streamspark.dataframe import StreamingDataFrame
from streamspark.models import MessageContext, Topic

#: (name, mode, aggregation, duration, grace, records (value, key, timestamp), per record:
#: "error" or (windows emitted (start, end, value, key), on_late calls (value, key,
#: timestamp, late_by, start, end)))
CASES: list[tuple[Any, ...]] = [
    (
        "an out-of-order record whose left window expired joins the open windows, unreported",
        "current",
        "sum",
        2,
        0,
        [(1, "a", 3), (2, "a", 1)],
        [([(1, 3, 1, "a")], []), ([(1, 3, 3, "a")], [])],
    ),
    (
        "current: an out-of-order record's left window is created and emitted though expired",
        "current",
        "sum",
        2,
        0,
        [(1, "a", 1), (2, "a", 3), (4, "a", 2)],
        [([(0, 1, 1, "a")], []), ([(1, 3, 3, "a")], []), ([(0, 2, 5, "a"), (1, 3, 7, "a")], [])],
    ),
    (
        "final: such a window is emitted at once",
        "final",
        "sum",
        2,
        0,
        [(1, "a", 8), (2, "a", 10), (4, "a", 9)],
        [([], []), ([(6, 8, 1, "a")], []), ([(7, 9, 5, "a")], [])],
    ),
    (
        "final collect: such a window collects only the record",
        "final",
        "collect",
        3,
        0,
        [(1, "a", 1), (2, "a", 2), (4, "a", 7), (8, "a", 6)],
        [([], []), ([], []), ([(0, 1, [1], "a"), (0, 2, [1, 2], "a")], []), ([(3, 6, [8], "a")], [])],
    ),
    (
        "a record held only by a deleted window is not in a later window",
        "current",
        "sum",
        1,
        5,
        [(1, "a", 6), (2, "a", 1), (4, "a", 7), (8, "a", 2)],
        [([(5, 6, 1, "a")], []), ([(0, 1, 2, "a")], []), ([(6, 7, 5, "a")], []), ([(1, 2, 8, "a")], [])],
    ),
    (
        "a record whose left window expired is not stored",
        "current",
        "sum",
        7,
        9,
        [(1, "a", 17), (2, "a", 1), (4, "a", 8)],
        [([(10, 17, 1, "a")], []), ([], []), ([(1, 8, 4, "a")], [])],
    ),
    (
        "final: a record late for a closed window is reported per window",
        "final",
        "sum",
        4,
        0,
        [(1, "a", 1), (2, "a", 5), (4, "a", 1)],
        [([], []), ([(0, 1, 1, "a")], []), ([], [(4, "a", 1, 4, 0, 1)])],
    ),
    (
        "current: on_late names each expired window that holds the record",
        "current",
        "sum",
        10,
        0,
        [(1, "a", 5), (2, "a", 12), (4, "a", 3)],
        [([(0, 5, 1, "a")], []), ([(2, 12, 3, "a")], []), ([(2, 12, 7, "a")], [(4, "a", 3, 9, 0, 5)])],
    ),
    (
        "a record at timestamp 0 raises ValueError (a window cannot end at its start)",
        "current",
        "sum",
        5,
        0,
        [(1, "a", 0)],
        ["error"],
    ),
    (
        "a record at the end of a window holding only an earlier one starts that one's right window",
        "current",
        "sum",
        9,
        1,
        [(1, "a", 7), (2, "a", 13), (4, "a", 17), (8, "a", 21), (16, "a", 22), (64, "a", 19), (128, "a", 25)],
        [
            ([(0, 7, 1, "a")], []),
            ([(4, 13, 3, "a")], []),
            ([(8, 17, 6, "a")], []),
            ([(12, 21, 14, "a")], []),
            ([(13, 22, 30, "a")], []),
            ([(12, 21, 78, "a"), (13, 22, 94, "a")], []),
            ([(16, 25, 220, "a")], []),
        ],
    ),
    (
        "a left window built from the previous window's aggregate",
        "current",
        "sum",
        9,
        0,
        [(1, "b", 2), (2, "b", 1), (4, "b", 11), (8, "b", 13), (16, "b", 4)],
        [
            ([(0, 2, 1, "b")], []),
            ([(0, 1, 2, "b"), (0, 2, 3, "b")], []),
            ([(2, 11, 5, "b")], []),
            ([(4, 13, 12, "b")], []),
            ([(4, 13, 28, "b")], [(16, "b", 4, 9, 3, 12)]),
        ],
    ),
    (
        "final collect over records out of order within grace",
        "final",
        "collect",
        5,
        2,
        [(1, "a", 5), (2, "a", 4), (4, "a", 1), (8, "a", 10), (16, "a", 11), (32, "a", 6), (64, "a", 30)],
        [
            ([], []),
            ([], []),
            ([], []),
            ([(0, 1, [4], "a"), (0, 4, [4, 2], "a"), (0, 5, [4, 2, 1], "a")], []),
            ([], []),
            ([], [(32, "a", 6, 3, 2, 7)]),
            ([(5, 10, [1, 32, 8], "a"), (6, 11, [32, 8, 16], "a")], []),
        ],
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_out_of_order_records_as_the_reference(case):
    _, mode, agg, duration, grace, records, expected = case
    late: list[tuple[Any, ...]] = []

    def on_late(value, key, ts, late_by, start, end, name, topic, partition, offset) -> bool:
        late.append((value, key, ts, late_by, start, end))
        return False

    window = StreamingDataFrame(Topic("w")).sliding_window(duration, grace_ms=grace, on_late=on_late)
    window = window.sum() if agg == "sum" else window.collect()
    pipeline = window.current() if mode == "current" else window.final()
    for i, ((value, key, ts), want) in enumerate(zip(records, expected)):
        late.clear()
        ctx = MessageContext(key=key, topic="w", partition=0, offset=i, size=0, timestamp=ts, headers=None)
        if want == "error":
            with pytest.raises(ValueError, match="Invalid window duration"):
                pipeline.test(value, key=key, timestamp=ts, ctx=ctx)
            continue
        got = [(v["start"], v["end"], v["value"], k) for v, k, t, _ in pipeline.test(value, key=key, timestamp=ts, ctx=ctx)]
        windows, reported = want
        assert got == windows, f"record {i}"
        assert late == reported, f"record {i}"


def test_a_keys_state_of_an_earlier_version_is_replayed_into_windows():
    """Earlier versions kept a key's records (``events``); a new record on such a state gives
    what processing every record with this version gives."""
    from streamspark.dataframe.windows._process import Aggregation, SlidingWindowProcessor
    from streamspark.dataframe.windows.aggregations import Sum

    class Store:
        def __init__(self) -> None:
            self.data: dict[Any, dict[str, Any]] = {}

        def window_data(self, name: str, key: Any) -> dict[str, Any]:
            return self.data.setdefault((name, key), {})

    def processor() -> SlidingWindowProcessor:
        return SlidingWindowProcessor("w", Aggregation({"value": Sum()}, {}, True), 10, 2)

    records = [(1, 5), (2, 9), (4, 14), (8, 12)]
    fresh = Store()
    for value, ts in records:
        processor().process(value, b"k", ts, fresh, True)
    old = Store()
    old.data[("w", b"k")] = {
        "latest": 14,
        "seq": 4,
        "closed_upto": -1,
        "events": [(ts, i + 1, v) for i, (v, ts) in enumerate(records)],
    }
    assert processor().process(16, b"k", 20, old, True) == processor().process(16, b"k", 20, fresh, True)
    assert "events" not in old.data[("w", b"k")]
