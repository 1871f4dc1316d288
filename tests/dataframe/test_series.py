"""Every StreamingSeries operator and method, and the reference's rules around them."""

from __future__ import annotations

import pytest

from streamspark import message_context
from streamspark.dataframe import StreamingDataFrame, StreamingSeries
from streamspark.dataframe.exceptions import ColumnDoesNotExist, InvalidColumnReference, InvalidOperation
from streamspark.models import MessageContext, Topic

SDF = StreamingDataFrame(Topic("t"))
A, B = SDF["a"], SDF["b"]
ROW = {"a": 7, "b": 2, "s": "hello", "n": None, "l": [1, 2], "neg": -3, "t": True, "f": False}


def col(name):
    return SDF[name]


@pytest.mark.parametrize(
    "expr, expected",
    [
        (A + B, 9),
        (A + 1, 8),
        (1 + A, 8),
        (A - B, 5),
        (A - 1, 6),
        (10 - A, 3),
        (A * B, 14),
        (A * 2, 14),
        (2 * A, 14),
        (A / B, 3.5),
        (A / 2, 3.5),
        (14 / A, 2.0),
        (A // B, 3),
        (A // 2, 3),
        (15 // A, 2),
        (A % B, 1),
        (A % 4, 3),
        (15 % A, 1),
        (A**B, 49),
        (B**3, 8),
        (2**B, 4),
        (-A, -7),
        (abs(col("neg")), 3),
        (col("neg").abs(), 3),
        (A == 7, True),
        (A != 7, False),
        (A < B, False),
        (A <= 7, True),
        (A > B, True),
        (A >= 8, False),
        (col("t") & col("f"), False),
        (col("t") | col("f"), True),
        ((A > 1) & (B > 1), True),
        ((A > 10) | (B > 10), False),
        (True & col("f"), False),
        (False | col("t"), True),
        (~col("f"), True),
        # logical, not bitwise: the operand that decides is the result
        (A & B, 2),
        (A | B, 7),
        (col("n") | "default", "default"),
        (0 & A, 0),
        (A.isin([1, 7]), True),
        (A.isin({1}), False),
        (A.isin(col("l")), False),
        (col("s").contains("ell"), True),
        (col("l").contains(3), False),
        (col("n").is_(None), True),
        (A.isnot(None), True),
        (A.is_(A), True),
        (col("n").isnull(), True),
        (A.isnull(), False),
        (A.notnull(), True),
        (A.apply(lambda x: x * 10), 70),
        (col("l")[1], 2),
        ((A + B) * (A - B), 45),
    ],
)
def test_series_operations(expr, expected):
    assert expr.test(ROW, b"k", 0) == (expected, b"k", 0, None)


def test_test_returns_result_key_timestamp_headers_and_sets_the_context():
    ctx = MessageContext(key=b"k", topic="t", partition=2, offset=9, size=0, timestamp=1)
    series = A.apply(lambda v: v + message_context().offset)
    assert series.test({"a": 1}, b"key", 5, [("h", b"1")], ctx=ctx) == (10, b"key", 5, [("h", b"1")])


def test_compose_returning_gives_the_whole_record():
    assert (A + 1).compose_returning()({"a": 1}, b"k", 3, None) == (2, b"k", 3, None)


@pytest.mark.parametrize(
    "expr, row",
    [
        (col("x").isnull() | (col("y") > 1), {"x": None}),  # y is missing: never read
        (col("x").notnull() & (col("y") > 1), {"x": None}),
        (False & col("y"), {}),
        (True | col("y"), {}),
    ],
)
def test_and_or_short_circuit(expr, row):
    assert expr.test(row, b"k", 0)[0] in (True, False)


def test_and_or_evaluate_the_right_side_when_needed():
    with pytest.raises(ColumnDoesNotExist):
        (col("x").notnull() | (col("y") > 1)).test({"x": None}, b"k", 0)


@pytest.mark.parametrize(
    "use",
    [
        lambda s: bool(s),
        lambda s: s and True,
        lambda s: s or True,
        lambda s: not s,
        lambda s: 1 if s else 0,
        lambda s: 1 < s < 3,  # a chained comparison is `and`
        lambda s: list(s),
        lambda s: 3 in s,
    ],
)
def test_truth_value_and_iteration_raise_invalid_operation(use):
    with pytest.raises(InvalidOperation):
        use(A > 1)


def test_invalid_operation_is_also_a_value_error():
    with pytest.raises(ValueError):
        bool(A)


@pytest.mark.parametrize(
    "combine",
    [
        lambda a, b: a + b,
        lambda a, b: a == b,
        lambda a, b: a & b,
        lambda a, b: a | b,
        lambda a, b: a.isin(b),
        lambda a, b: a.contains(b),
        lambda a, b: a.is_(b),
        lambda a, b: a.isnot(b),
        lambda a, b: a[b],
    ],
)
def test_series_of_different_dataframes_cannot_be_combined(combine):
    other = StreamingDataFrame(Topic("t"))
    with pytest.raises(InvalidOperation, match="one `StreamingDataFrame`"):
        combine(A, other["b"])


def test_branches_of_one_topic_are_different_dataframes():
    sdf = StreamingDataFrame(Topic("t"))
    branch = sdf.apply(lambda v: v)
    with pytest.raises(InvalidOperation):
        sdf["a"] + branch["a"]
    # in-place steps return the same dataframe, whose series still combine
    same = sdf.update(lambda v: None)
    assert (sdf["a"] + same["b"]).test({"a": 1, "b": 2}, b"k", 0)[0] == 3


@pytest.mark.parametrize(
    "value, error, message",
    [
        ({"b": 1}, ColumnDoesNotExist, "Column 'a' does not exist in the message value"),
        (5, InvalidColumnReference, "expects message value type 'dict', not 'int'"),
        (None, InvalidColumnReference, "not 'NoneType'"),
        ([1, 2], InvalidColumnReference, "not 'list'"),
    ],
)
def test_column_reference_errors(value, error, message):
    with pytest.raises(error, match=message):
        A.test(value, b"k", 0)


def test_nested_item_errors_are_plain():
    with pytest.raises(KeyError):
        col("d")["missing"].test({"d": {}}, b"k", 0)


def test_series_from_apply_callback_uses_metadata():
    s = StreamingSeries.from_apply_callback(lambda v, k, t, h: (k, t), sdf_id=None)
    assert s.test({}, b"k", 3) == ((b"k", 3), b"k", 3, None)


def test_series_from_a_stream_of_apply_steps():
    from streamspark.core.stream import Stream

    stream = Stream().add_apply(lambda v: v["a"]).add_apply(lambda v: v * 3)
    assert StreamingSeries(sdf_id=None, stream=stream).test({"a": 2}, b"k", 0) == (6, b"k", 0, None)


@pytest.mark.parametrize("kwargs", [{}, {"name": ""}, {"sdf_id": 1}])
def test_series_needs_a_name_or_a_stream(kwargs):
    with pytest.raises(ValueError, match='Either "name" or "stream"'):
        StreamingSeries(**kwargs)


def test_series_in_a_dataframe_column_assignment():
    sdf = StreamingDataFrame(Topic("t"))
    sdf["f"] = sdf["c"] * 9 / 5 + 32
    sdf["hot"] = (sdf["f"] > 100) & sdf["ok"]
    assert sdf.test({"c": 40, "ok": True})[0][0] == {"c": 40, "ok": True, "f": 104.0, "hot": True}
