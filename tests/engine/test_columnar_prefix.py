"""The ``columnar-prefix`` path: a topic's first filters and column assignments evaluated over a
decoded Avro chunk with numpy (``engine/columnar_prefix.py``), against the plain path that
builds every record's dict and runs those steps on it one by one.

Most tests drive the task code (``TaskProcessor``) in this process; the Spark run of both paths
is in ``test_avro_chunks.py`` (``test_both_paths_on_spark_give_the_same_topic``).
"""

from __future__ import annotations

import io
import math
import random
from typing import Any, Callable

import fastavro
import pyarrow as pa
import pytest

from streamspark.core.stream.expressions import Binary, Column, Constant
from streamspark.dataframe import StreamingDataFrame
from streamspark.dataframe.series import StreamingSeries
from streamspark.engine.columnar_prefix import ColumnarPrefix, Step
from streamspark.models import Topic
from streamspark.models.serializers.avro import AvroDeserializer

from .lake_tasks import task_processor

SCHEMA: dict[str, Any] = {
    "type": "record",
    "name": "Reading",
    "fields": [
        {"name": "id", "type": "long"},
        {"name": "level", "type": "int"},
        {"name": "temp", "type": "double"},
        {"name": "ratio", "type": "float"},
        {"name": "ok", "type": "boolean"},
        {"name": "name", "type": "string"},
        {"name": "maybe", "type": ["null", "double"], "default": None},
    ],
}
PARSED = fastavro.parse_schema(SCHEMA)
T0 = 1_704_067_200_000


def _encode(record: dict[str, Any]) -> bytes:
    buffer = io.BytesIO()
    fastavro.schemaless_writer(buffer, PARSED, record)
    return buffer.getvalue()


def _readings(n: int, rnd: random.Random, specials: bool = True) -> list[dict[str, Any]]:
    """Readings with zeros, negative zeros, NaN, infinities and big longs now and then."""

    def number(draw: Callable[[], float]) -> float:
        if specials and rnd.random() < 0.08:
            return rnd.choice([0.0, -0.0, math.nan, math.inf, -math.inf, 1e308])
        return draw()

    return [
        {
            "id": rnd.choice([0, 2**53 + 1, -(2**62)]) if specials and rnd.random() < 0.03 else rnd.randint(-50, 50),
            "level": rnd.choice([0, rnd.randint(-5, 5), rnd.randint(-(2**31), 2**31 - 1)]),
            "temp": number(lambda: round(rnd.uniform(-40, 60), 2)),
            "ratio": number(rnd.random),
            "ok": rnd.random() < 0.5,
            "name": rnd.choice(["a", "süd", ""]),
            "maybe": None if rnd.random() < 0.3 else rnd.uniform(-1, 1),
        }
        for _ in range(n)
    ]


def _records(values: list[dict[str, Any]], start: int = 0) -> list[tuple[Any, ...]]:
    return [("in", 0, start + i, T0 + i, 1, f"k{i % 5}".encode(), _encode(v), None) for i, v in enumerate(values)]


def _run_both(
    app_factory: Any, build: Callable[[Any], Any], chunks: list[list[tuple[Any, ...]]], **app_kwargs: Any
) -> list[tuple[Any, Any]]:
    """Per path (fast, then plain): the processor after the chunks, and its summary.
    ``build(sdf)`` adds the steps; outputs are collected with their metadata."""
    runs = []
    for plain in ((), ("columnar-prefix",)):
        app = app_factory(**app_kwargs)
        sdf = app.dataframe(app.topic("in", value_deserializer=AvroDeserializer(SCHEMA)))
        build(sdf).to_topic(app.topic("out"))
        processor = task_processor(app, collect=True, plain=plain)
        assert bool(processor.prefixes) is not plain
        for chunk in chunks:
            processor.process(chunk)
        runs.append((processor, processor.finish()))
    return runs


def _same(fast: Any, plain: Any) -> None:
    """The same outputs, value types, key order and NaNs included (compared by repr)."""
    (fast_proc, fast_summary), (plain_proc, plain_summary) = fast, plain
    assert repr(fast_proc.collected) == repr(plain_proc.collected)
    assert (fast_summary.input_count, fast_summary.output_count, fast_summary.skipped) == (
        plain_summary.input_count,
        plain_summary.output_count,
        plain_summary.skipped,
    )
    errors = [(e.stage, e.topic, e.partition, e.offset, e.type) if e else None for e in (fast_summary.error, plain_summary.error)]
    assert errors[0] == errors[1]


@pytest.fixture()
def prefix_runs(monkeypatch: Any) -> list[bool]:
    """Whether each call of ``ColumnarPrefix.run`` evaluated its chunk (False: refused)."""
    seen: list[bool] = []
    real = ColumnarPrefix.run

    def counted(self: ColumnarPrefix, table: pa.Table) -> Any:
        result = real(self, table)
        seen.append(result is not None)
        return result

    monkeypatch.setattr(ColumnarPrefix, "run", counted)
    return seen


def test_w1_steps_give_the_plain_paths_outputs(app_factory, prefix_runs):
    rnd = random.Random(1)
    values = _readings(400, rnd, specials=False)

    def build(sdf: Any) -> Any:
        sdf = sdf[sdf["temp"] > 25]
        sdf["temp_f"] = sdf["temp"] * 9 / 5 + 32
        return sdf.apply(lambda v: {**v, "tag": "hot"})

    fast, plain = _run_both(app_factory, build, [_records(values[:150]), _records(values[150:], 150)])
    _same(fast, plain)
    assert prefix_runs == [True, True]  # both chunks evaluated by columns
    outputs = fast[0].collected
    assert len(outputs) == sum(v["temp"] > 25 for v in values) > 50
    assert list(outputs[0]) == [f["name"] for f in SCHEMA["fields"]] + ["temp_f", "tag"]


def _random_series(sdf: Any, rnd: random.Random, depth: int = 0) -> Any:
    """A random column expression over the schema's columns (also ones numpy must refuse)."""
    if depth >= 3 or rnd.random() < 0.3:
        if rnd.random() < 0.65:
            return sdf[rnd.choice(["id", "level", "temp", "ratio", "ok", "maybe", "name", "extra", "nope"])]
        return rnd.choice([0, 1, 2, -3, 2.5, -0.0, 0.0, math.nan, math.inf, True, False, 2**53 + 1, 7])
    left = _random_series(sdf, rnd, depth + 1)
    right = _random_series(sdf, rnd, depth + 1)
    if not isinstance(left, StreamingSeries):
        if not isinstance(right, StreamingSeries):
            return sdf[rnd.choice(["temp", "level"])]
        left, right = right, left
    op = rnd.choice(["+", "-", "*", "/", ">", ">=", "<", "<=", "==", "!=", "&", "|", "~", "r+", "r/", "r>"])
    if op == "~":
        return ~left
    if op.startswith("r"):  # the constant or series on the left of the operator
        return {"r+": lambda a, b: b + a, "r/": lambda a, b: b / a, "r>": lambda a, b: b > a}[op](left, right)
    ops: dict[str, Callable[[Any, Any], Any]] = {
        "+": lambda a, b: a + b,
        "-": lambda a, b: a - b,
        "*": lambda a, b: a * b,
        "/": lambda a, b: a / b,
        ">": lambda a, b: a > b,
        ">=": lambda a, b: a >= b,
        "<": lambda a, b: a < b,
        "<=": lambda a, b: a <= b,
        "==": lambda a, b: a == b,
        "!=": lambda a, b: a != b,
        "&": lambda a, b: a & b,
        "|": lambda a, b: a | b,
    }
    return ops[op](left, right)


@pytest.mark.parametrize("seed", range(12))
def test_random_prefixes_give_the_plain_paths_outputs(app_factory, prefix_runs, seed):
    """Random chains of filters and assignments (with zero divisors, NaN, infinities, big
    integers, booleans, strings, nulls and missing columns in the data and the expressions):
    the same outputs and errors as the plain path, whether the chunk was evaluated by columns or
    refused. Errors are skipped so that every chunk runs to its end on both paths."""
    rnd = random.Random(seed)
    chunks = [_records(_readings(60, rnd, specials=seed % 2 == 0), start=60 * i) for i in range(3)]
    plan = [
        (rnd.random() < 0.5, rnd.choice(["extra", "temp", "new2", "level"]), rnd.getrandbits(32))
        for _ in range(rnd.randint(1, 4))
    ]

    def build(sdf: Any) -> Any:
        for is_filter, column, step_seed in plan:
            series = _random_series(sdf, random.Random(step_seed))
            if not isinstance(series, StreamingSeries):  # a constant
                series = sdf["level"] != series
            if is_filter:
                sdf = sdf[series]
            else:
                sdf[column] = series
        return sdf

    fast, plain = _run_both(app_factory, build, chunks, on_processing_error=lambda exc, row, logger: True)
    _same(fast, plain)


def test_random_prefixes_are_evaluated_by_columns_often(app_factory, prefix_runs):
    """Over many random numeric prefixes on data without special values, most chunks are
    evaluated by columns (the comparison above would otherwise test refusals only)."""
    for seed in range(40):
        rnd = random.Random(1000 + seed)
        chunk = _records(_readings(40, rnd, specials=False))

        steps = [
            (rnd.choice(["temp", "ratio", "level"]) if rnd.random() < 0.5 else rnd.choice([2, 0.5, -3]), rnd.choice("+*-"))
            for _ in range(rnd.randint(1, 3))
        ]
        threshold = rnd.uniform(-20, 20)

        def build(sdf: Any, steps: list[tuple[Any, str]] = steps, threshold: float = threshold) -> Any:

            def series(sdf: Any) -> Any:
                result = sdf["temp"]
                for other, op in steps:
                    operand = sdf[other] if isinstance(other, str) else other
                    result = {"+": result + operand, "*": result * operand, "-": result - operand}[op]
                return result

            sdf = sdf[(series(sdf) > threshold) | ~sdf["ok"]]
            sdf["score"] = series(sdf) * 2 + sdf["level"]
            return sdf

        fast, plain = _run_both(app_factory, build, [chunk], on_processing_error=lambda exc, row, logger: True)
        _same(fast, plain)
    assert sum(prefix_runs) >= 0.9 * len(prefix_runs) and len(prefix_runs) == 40


def test_a_step_failing_after_the_prefix_is_reported_on_its_record(app_factory):
    """A processing error after the prefix names the record's offset, as on the plain path."""
    values = _readings(50, random.Random(3), specials=False)

    def build(sdf: Any) -> Any:
        sdf = sdf[sdf["temp"] > 0]
        return sdf.apply(lambda v: 1 / (v["id"] % 4))

    fast, plain = _run_both(app_factory, build, [_records(values)])
    _same(fast, plain)
    assert fast[1].error is not None and fast[1].error.stage == "processing"
    assert fast[1].error.offset == next(i for i, v in enumerate(values) if v["temp"] > 0 and v["id"] % 4 == 0)


def test_message_processed_callbacks_and_contexts_match(app_factory):
    """``on_message_processed`` sees every offset in order, and a step after the prefix sees
    the message context of its own record."""
    from streamspark import message_context

    seen: dict[str, list[Any]] = {"fast": [], "plain": []}
    values = _readings(30, random.Random(4), specials=False)
    runs = []
    for name, plain in (("fast", ()), ("plain", ("columnar-prefix",))):
        app = app_factory(on_message_processed=lambda topic, part, offset, out=seen[name]: out.append(offset))
        sdf = app.dataframe(app.topic("in", value_deserializer=AvroDeserializer(SCHEMA)))
        sdf = sdf[sdf["temp"] > 10]
        sdf = sdf.apply(lambda v: (v["id"], message_context().offset, message_context().key.decode()))
        sdf.to_topic(app.topic("out"))
        processor = task_processor(app, collect=True, plain=plain)
        processor.process(_records(values))
        runs.append((processor, processor.finish()))
    _same(*runs)
    assert seen["fast"] == seen["plain"] == list(range(30))
    expected = [i for i, v in enumerate(values) if v["temp"] > 10]
    # a collected value that is not a dict comes as {"_value": value}, as app.run() returns it
    collected = [row["_value"] for row in runs[0][0].collected]
    assert [(offset, key) for _, offset, key in collected] == [(i, f"k{i % 5}") for i in expected]
    assert runs[0][1].error is None and len(expected) > 5


def test_the_prefix_stops_at_the_first_other_step():
    """Stateful, function and dataframe filters, branches and apply steps end the prefix."""
    sdf = StreamingDataFrame(Topic("t"))
    first = sdf[sdf["a"] > 1]
    first["b"] = first["a"] * 2
    first = first.filter(lambda v: v["b"] > 0)  # a function: not an expression
    first["c"] = 5
    prefix = ColumnarPrefix.of(_root(first))
    assert prefix is not None
    assert prefix.steps == (
        Step(None, Binary("gt", Column("a"), Constant(1))),
        Step("b", Binary("mul", Column("a"), Constant(2))),
    )

    branched = StreamingDataFrame(Topic("t"))
    branched = branched[branched["a"] > 1]
    branched.apply(lambda v: v)
    branched.apply(lambda v: v)  # two steps after the filter: the filter is not in the prefix
    assert ColumnarPrefix.of(_root(branched)) is None

    stateful = StreamingDataFrame(Topic("t"))
    stateful = stateful.filter(lambda v, state: True, stateful=True)
    assert ColumnarPrefix.of(_root(stateful)) is None

    applied = StreamingDataFrame(Topic("t"))
    applied = applied[applied["a"].apply(abs) > 1]  # .apply makes a function, not an expression
    assert ColumnarPrefix.of(_root(applied)) is None


def _root(sdf: Any) -> Any:
    node = sdf._stream.node  # noqa: SLF001
    while node.parent is not None:
        node = node.parent
    return node


@pytest.mark.parametrize(
    "column, reason",
    [
        ("maybe", "a null where the expression reads"),
        ("name", "a string column"),
        ("nope", "a column the schema does not have"),
    ],
)
def test_chunks_it_cannot_evaluate_exactly_are_refused(column, reason):
    table = pa.table({"maybe": pa.array([1.0, None]), "name": pa.array(["a", "b"]), "temp": pa.array([1.0, 2.0])})
    prefix = ColumnarPrefix((Step(None, Binary("gt", Column(column), Constant(0))),), last=None)
    assert prefix.run(table) is None, reason
    assert prefix.run(table.select(["temp"])) is None or column == "temp"


@pytest.mark.parametrize(
    "expression, data",
    [
        (Binary("truediv", Column("x"), Column("y")), {"x": [1.0, 2.0], "y": [1.0, 0.0]}),  # ZeroDivisionError
        (Binary("add", Column("i"), Constant(1)), {"i": [2**53, 1]}),  # past exact floats
        (Binary("mul", Column("i"), Column("i")), {"i": [2**30, 2**27]}),  # an int product past 2**53
        (Binary("add", Column("b"), Constant(1)), {"b": [True, False]}),  # bool arithmetic
        (Binary("mul", Column("i"), Constant(2)), {"i": [-(2**63), 5]}),  # np.abs(-2**63) wraps around
        (Binary("sub", Constant(0), Column("i")), {"i": [-(2**63), 5]}),
    ],
)
def test_arithmetic_numpy_would_get_wrong_is_refused(expression, data):
    prefix = ColumnarPrefix((Step("out", expression),), last=None)
    assert prefix.run(pa.table(data)) is None


def test_assigned_values_are_python_objects_of_pythons_types():
    table = pa.table({"i": pa.array([3, -4]), "x": pa.array([0.5, -0.0])})
    prefix = ColumnarPrefix(
        (
            Step("sum", Binary("add", Column("i"), Constant(2))),
            Step("half", Binary("truediv", Column("i"), Constant(2))),
            Step("neg", Binary("mul", Column("x"), Constant(-1))),
            Step("big", Binary("gt", Column("i"), Constant(0))),
            Step("i", Constant("replaced")),
        ),
        last=None,
    )
    selection = prefix.run(table)
    assert selection is not None
    records = list(selection.records())
    assert repr(records) == repr(
        [
            {"i": "replaced", "x": 0.5, "sum": 5, "half": 1.5, "neg": -0.5, "big": True},
            {"i": "replaced", "x": -0.0, "sum": -2, "half": -2.0, "neg": 0.0, "big": False},
        ]
    )
