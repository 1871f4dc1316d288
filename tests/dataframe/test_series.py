"""Every StreamingSeries operator and method."""

from __future__ import annotations

import pytest

from streamspark.dataframe import StreamingDataFrame, StreamingSeries
from streamspark.models import Topic

A = StreamingSeries("a")
B = StreamingSeries("b")
ROW = {"a": 7, "b": 2, "s": "hello", "n": None, "l": [1, 2], "neg": -3, "t": True, "f": False}


@pytest.mark.parametrize(
    "expr, expected",
    [
        (A + B, 9), (A + 1, 8), (1 + A, 8),
        (A - B, 5), (A - 1, 6), (10 - A, 3),
        (A * B, 14), (A * 2, 14), (2 * A, 14),
        (A / B, 3.5), (A / 2, 3.5), (14 / A, 2.0),
        (A // B, 3), (A // 2, 3), (15 // A, 2),
        (A % B, 1), (A % 4, 3), (15 % A, 1),
        (A ** B, 49), (B ** 3, 8), (2 ** B, 4),
        (-A, -7), (abs(StreamingSeries("neg")), 3), (StreamingSeries("neg").abs(), 3),
        (A == 7, True), (A != 7, False), (A < B, False), (A <= 7, True), (A > B, True), (A >= 8, False),
        (StreamingSeries("t") & StreamingSeries("f"), False), (StreamingSeries("t") | StreamingSeries("f"), True),
        ((A > 1) & (B > 1), True), ((A > 10) | (B > 10), False), (True & StreamingSeries("f"), False),
        (False | StreamingSeries("t"), True), (~StreamingSeries("f"), True),
        (A.isin([1, 7]), True), (A.isin({1}), False),
        (StreamingSeries("s").contains("ell"), True), (StreamingSeries("l").contains(3), False),
        (StreamingSeries("n").is_(None), True), (A.isnot(None), True),
        (StreamingSeries("n").isnull(), True), (A.isnull(), False), (A.notnull(), True),
        (A.apply(lambda x: x * 10), 70), (StreamingSeries("l")[1], 2),
        ((A + B) * (A - B), 45),
    ],
)
def test_series_operations(expr, expected):
    assert expr.test(ROW) == expected


def test_series_has_no_truth_value():
    with pytest.raises(TypeError, match="no truth value"):
        bool(A > 1)


def test_series_from_apply_callback_uses_metadata():
    s = StreamingSeries.from_apply_callback(lambda v, k, t, h: (k, t))
    assert s.test({}, key=b"k", timestamp=3) == (b"k", 3)


def test_series_needs_a_name_or_function():
    with pytest.raises(ValueError):
        StreamingSeries()


def test_series_in_a_dataframe_column_assignment():
    sdf = StreamingDataFrame(Topic("t"))
    sdf["f"] = sdf["c"] * 9 / 5 + 32
    sdf["hot"] = (sdf["f"] > 100) & sdf["ok"]
    assert sdf.test({"c": 40, "ok": True})[0][0] == {"c": 40, "ok": True, "f": 104.0, "hot": True}
