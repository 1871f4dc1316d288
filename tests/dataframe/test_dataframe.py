"""Every StreamingDataFrame operation through ``sdf.test()`` (no Spark, no broker)."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from streamspark import message_context
from streamspark.dataframe import StreamingDataFrame
from streamspark.dataframe.exceptions import (
    GroupByDuplicate,
    GroupByLimitExceeded,
    GroupByNestingLimit,
    InvalidOperation,
)
from streamspark.models import MessageContext, Topic
from streamspark.models.serializers import SerializationError
from streamspark.sinks import ListSink


@pytest.fixture
def sdf() -> StreamingDataFrame:
    return StreamingDataFrame(Topic("in"))


def values(result):
    return [r[0] for r in result]


def test_apply_replaces_value(sdf):
    assert values(sdf.apply(lambda v: v * 2).test(3)) == [6]


def test_apply_metadata_gets_key_timestamp_headers(sdf):
    out = sdf.apply(lambda v, k, t, h: (v, k, t, h), metadata=True).test(1, key=b"k", timestamp=5, headers=[("a", b"1")])
    assert values(out) == [(1, b"k", 5, [("a", b"1")])]


def test_apply_expand_emits_each_item_and_rejects_non_iterables(sdf):
    assert values(sdf.apply(lambda v: range(v), expand=True).test(3)) == [0, 1, 2]
    with pytest.raises(TypeError):
        StreamingDataFrame(Topic("t")).apply(lambda v: 5, expand=True).test(1)


def test_apply_expand_with_metadata(sdf):
    out = sdf.apply(lambda v, k, t, h: [k, t], expand=True, metadata=True).test(0, key=b"x", timestamp=9)
    assert values(out) == [b"x", 9]


def test_update_is_in_place_and_ignores_result(sdf):
    same = sdf.update(lambda v: v.append(1) or "ignored")
    assert same is sdf
    assert values(sdf.test([0])) == [[0, 1]]


def test_update_metadata(sdf):
    sdf.update(lambda v, k, t, h: v.update(key=k), metadata=True)
    assert values(sdf.test({}, key=b"z")) == [{"key": b"z"}]


def test_filter_and_filter_metadata():
    assert values(StreamingDataFrame(Topic("t")).filter(lambda v: v > 1).test(2)) == [2]
    assert StreamingDataFrame(Topic("t")).filter(lambda v: v > 1).test(1) == []
    assert StreamingDataFrame(Topic("t")).filter(lambda v, k, t, h: k == b"ok", metadata=True).test(1, key=b"no") == []


def test_stateful_steps_keep_state_per_key_across_test_calls(sdf):
    def count(v, state):
        n = state.get("n", 0) + 1
        state.set("n", n)
        return {**v, "n": n}

    sdf = sdf.apply(count, stateful=True)
    sdf = sdf.filter(lambda v, state: not state.exists(v["e"]), stateful=True)
    sdf.update(lambda v, k, t, h, state: state.set(v["e"], True), stateful=True, metadata=True)
    outs = [values(sdf.test({"e": e}, key=k)) for k, e in [(b"a", "x"), (b"a", "y"), (b"b", "x"), (b"a", "x")]]
    assert outs == [[{"e": "x", "n": 1}], [{"e": "y", "n": 2}], [{"e": "x", "n": 1}], []]


def test_unserializable_state_value_names_the_step(sdf):
    def keep(v, state):
        state.set("bad", {1, 2})

    sdf.update(keep, stateful=True)
    with pytest.raises(Exception, match=r"state value for key 'bad' in update\(keep\) in stream \"in\" .* not JSON-serialisable"):
        sdf.test({})


def test_column_get_set_and_nested(sdf):
    sdf["b"] = sdf["a"]["x"] + 1
    sdf["c"] = 7
    assert values(sdf.test({"a": {"x": 1}})) == [{"a": {"x": 1}, "b": 2, "c": 7}]


def test_column_subset_and_boolean_filter(sdf):
    assert values(sdf[["a", "b"]].test({"a": 1, "b": 2, "c": 3})) == [{"a": 1, "b": 2}]
    sdf = StreamingDataFrame(Topic("t"))
    flt = sdf[(sdf["a"] > 1) & (sdf["b"] < 5)]
    assert values(flt.test({"a": 2, "b": 3})) == [{"a": 2, "b": 3}]
    assert flt.test({"a": 0, "b": 3}) == []


def test_contains_requires_all_keys(sdf):
    sdf["has"] = sdf.contains(["a", "b"])
    sdf["has_a"] = sdf.contains("a")
    assert values(sdf.test({"a": 1})) == [{"a": 1, "has": False, "has_a": True}]


@pytest.mark.parametrize("keys", [5, None])
def test_contains_with_keys_that_are_not_iterable_fails_per_record(sdf, keys):
    """The keys are iterated when a record is processed, not when the series is made.

    Expected behaviour recorded from Quix Streams 3.28.1 (randomized differential audit).
    """
    flt = sdf[sdf.contains(keys)]  # no error here
    with pytest.raises(TypeError, match="not iterable"):
        flt.test({"a": 1})


def test_contains_iterates_its_keys_anew_for_each_record(sdf):
    """A one-shot iterable of keys is used up by the first record: later records check no key.

    Expected values recorded from Quix Streams 3.28.1 (randomized differential audit).
    """
    flt = sdf[sdf.contains(k for k in ["a"])]
    assert flt.test({}) == []
    assert flt.test({}) == [({}, b"key", 0, None)]


def test_projection_and_drop_read_the_column_list_given(sdf):
    """``sdf[cols]`` and ``sdf.drop(cols)`` use the list itself, so a later change of it shows.

    Expected values recorded from Quix Streams 3.28.1 (randomized differential audit).
    """
    cols = ["a"]
    projected = sdf[cols]
    cols.append("b")
    assert values(projected.test({"a": 1, "b": 2, "c": 3})) == [{"a": 1, "b": 2}]
    dropped = ["a"]
    other = StreamingDataFrame(Topic("t")).drop(dropped)
    dropped.append("b")
    assert values(other.test({"a": 1, "b": 2, "c": 3})) == [{"c": 3}]


def test_fill_missing_and_none(sdf):
    sdf.fill("x", y=2)
    assert values(sdf.test({"y": None, "x": 5})) == [{"y": 2, "x": 5}]
    assert values(sdf.test({})) == [{"x": None, "y": 2}]
    with pytest.raises(ValueError, match="No columns or mapping"):
        sdf.fill()


@pytest.mark.parametrize("value", [5, "text", None, [1, None], (None,)])
def test_fill_passes_values_that_are_not_dicts(value):
    assert values(StreamingDataFrame(Topic("t")).fill("x", y=1).test(value)) == [value]


def test_drop_raise_and_ignore(sdf):
    assert values(StreamingDataFrame(Topic("t")).drop(["a"]).test({"a": 1, "b": 2})) == [{"b": 2}]
    with pytest.raises(KeyError):
        StreamingDataFrame(Topic("t")).drop("zz").test({"a": 1})
    assert values(StreamingDataFrame(Topic("t")).drop("zz", errors="ignore").test({"a": 1})) == [{"a": 1}]
    with pytest.raises(TypeError, match="strings only"):
        sdf.drop([1])
    with pytest.raises(TypeError, match="a string or a list of strings"):
        sdf.drop(("a",))  # type: ignore[arg-type]
    assert sdf.drop([]) is sdf
    with pytest.raises(TypeError):  # the value must support `del`, even with errors="ignore"
        StreamingDataFrame(Topic("t")).drop("a", errors="ignore").test(5)


def test_set_timestamp_and_headers(sdf):
    out = (
        sdf.set_timestamp(lambda v, k, t, h: t + v).set_headers(lambda v, k, t, h: [("t", str(t).encode())]).test(5, timestamp=10)
    )
    assert out == [(5, b"key", 15, [("t", b"15")])]


def test_branches_get_independent_copies(sdf):
    a = sdf.apply(lambda v: v)
    a.update(lambda v: v.__setitem__("branch", "a"))
    b = sdf.apply(lambda v: v)
    b.update(lambda v: v.__setitem__("branch", "b"))
    out = values(sdf.test({"x": 1}))
    assert sorted(v["branch"] for v in out) == ["a", "b"]


def test_to_topic_with_a_topic_name_is_a_type_error_at_once(sdf):
    """As the reference, a ``TypeError`` (there it comes at the first record); here when the
    pipeline is built, naming what to pass."""
    with pytest.raises(TypeError, match=r"to_topic\(\) takes a Topic \(app.topic\(name\)\), got str: 'out'"):
        sdf.to_topic("out")  # type: ignore[arg-type]


def test_to_topic_serializes_and_continues(sdf):
    out_topic = Topic("out", key_serializer="str")
    sdf.to_topic(out_topic, key=lambda v: v["id"])
    assert values(sdf.test({"id": "k1"})) == [{"id": "k1"}]
    with pytest.raises(SerializationError):
        sdf.test({"id": 1})  # an int key with a str serializer


def test_sink_is_terminal_branch(sdf):
    sink = ListSink()
    assert sdf.sink(sink) is None
    sdf.apply(lambda v: v + 1)
    # the sink's branch yields None (its record went to the sink), as in Quix Streams
    assert values(sdf.test(1)) == [None, 2]
    sink.flush()
    assert list(sink) == [1]
    with pytest.raises(TypeError):
        sdf.sink(object())


def test_message_context_available_in_callbacks(sdf):
    ctx = MessageContext(key=b"k", topic="in", partition=3, offset=42, size=0, timestamp=1)
    out = sdf.apply(lambda v: message_context().offset).test(None, ctx=ctx)
    assert values(out) == [42]


@pytest.mark.parametrize(
    "kwargs, value, printed",
    [
        ({"pretty": False}, {"b": 2, "a": 1}, "{'value': {'b': 2, 'a': 1}}\n"),
        ({"pretty": False, "metadata": True}, 1, "{'value': 1, 'key': b'k', 'timestamp': 7, 'headers': None}\n"),
        ({}, 1, "{'value': 1}\n"),
        (
            {"metadata": True},
            {"b": "x" * 30, "a": "y" * 30},
            (
                "{ 'value': { 'b': 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxx',\n"
                "             'a': 'yyyyyyyyyyyyyyyyyyyyyyyyyyyyyy'},\n"
                "  'key': b'k',\n  'timestamp': 7,\n  'headers': None}\n"
            ),
        ),
    ],
)
def test_print_formats(kwargs, value, printed, capsys):
    sdf = StreamingDataFrame(Topic("t")).print(**kwargs)
    sdf.test(value, key=b"k", timestamp=7)
    assert capsys.readouterr().out == printed


TABLE = (
    "T\n"
    "┏━━━━━━┳━━━━━━━━━━━━┳━━━┓\n"
    "┃ _key ┃ _timestamp ┃ a ┃\n"
    "┡━━━━━━╇━━━━━━━━━━━━╇━━━┩\n"
    "│ b'k' │ 0          │ 1 │\n"
    "│ b'k' │ 0          │   │\n"
    "└──────┴────────────┴───┘\n"
)


@pytest.mark.parametrize(
    "kwargs, rows, printed",
    [
        ({"size": 2, "title": "T", "columns": ["a"]}, [{"a": 1, "b": 2}, {"b": 3}], TABLE),
        (
            {"size": 2, "metadata": False},
            [5, {"x": "long"}],
            ("┏━━━┳━━━━━━┓\n┃ 0 ┃ x    ┃\n┡━━━╇━━━━━━┩\n│ 5 │      │\n│   │ long │\n└───┴──────┘\n"),
        ),
        (
            {"size": 1, "metadata": False, "column_widths": {"x": 3}},
            [{"x": "long"}],
            ("┏━━━━━┓\n┃ x   ┃\n┡━━━━━┩\n│ lo… │\n└─────┘\n"),
        ),
        ({"size": 3}, [{"a": 1}], ""),  # not full yet (and the timeout has not passed)
    ],
)
def test_print_table(kwargs, rows, printed, capsys):
    sdf = StreamingDataFrame(Topic("t")).print_table(live=False, **kwargs)
    for row in rows:
        sdf.test(row, key=b"k")
    assert capsys.readouterr().out == printed


def test_print_table_prints_after_the_timeout(capsys):
    sdf = StreamingDataFrame(Topic("t")).print_table(size=10, timeout=0.0, metadata=False, live=False)
    sdf.test({"a": 1})
    assert "│ 1 │" in capsys.readouterr().out


def test_print_table_without_columns_or_metadata_warns():
    with pytest.warns(UserWarning, match="Table `T` will be empty"):
        StreamingDataFrame(Topic("t")).print_table(title="T", columns=[], metadata=False)


def test_compose_returns_function_per_topic(sdf):
    got = []
    sdf = sdf.apply(lambda v: v + 1)
    fn = sdf.compose(sink=lambda v, k, t, h: got.append(v))["in"]
    fn(1, b"k", 0, None)
    assert got == [2]


def test_test_refuses_a_topic_the_dataframe_does_not_read(sdf):
    assert sdf.test(1, topic=Topic("in")) == [(1, b"key", 0, None)]
    with pytest.raises(KeyError, match="Topic 'other' is not an input of this StreamingDataFrame; its topics: 'in'"):
        sdf.test(1, topic=Topic("other"))


# --- a dataframe as a filter or a column source --------------------------------------------


def count_seen(value, state):
    n = state.get("n", 0) + 1
    state.set("n", n)
    return n


@pytest.mark.parametrize(
    "build, records, expected",
    [
        (lambda sdf: sdf[sdf.apply(lambda v: v["n"] > 1)], [{"n": 1}, {"n": 2}], [[], [{"n": 2}]]),
        (lambda sdf: sdf[sdf.apply(lambda v: v["n"]).apply(lambda n: n % 2 == 0)], [{"n": 3}, {"n": 4}], [[], [{"n": 4}]]),
        (lambda sdf: sdf[sdf.apply(lambda v, k, t, h: k == b"key", metadata=True)], [{"n": 1}], [[{"n": 1}]]),
        (lambda sdf: sdf[sdf.apply(lambda v, state: count_seen(v, state) > 1, stateful=True)], [{}, {}, {}], [[], [{}], [{}]]),
    ],
)
def test_dataframe_as_a_filter(build, records, expected):
    sdf = build(StreamingDataFrame(Topic("t")))
    assert [values(sdf.test(r)) for r in records] == expected


@pytest.mark.parametrize(
    "build, record, expected",
    [
        (lambda sdf: sdf.__setitem__("x", sdf.apply(lambda v: v["n"] * 2)), {"n": 2}, {"n": 2, "x": 4}),
        (lambda sdf: sdf.__setitem__("x", sdf.apply(lambda v: v["n"]).apply(str)), {"n": 2}, {"n": 2, "x": "2"}),
        (lambda sdf: sdf.__setitem__("k", sdf.apply(lambda v, k, t, h: k, metadata=True)), {}, {"k": b"key"}),
        (lambda sdf: sdf.__setitem__("seen", sdf.apply(count_seen, stateful=True)), {}, {"seen": 1}),
    ],
)
def test_dataframe_as_a_column_source(build, record, expected):
    sdf = StreamingDataFrame(Topic("t"))
    build(sdf)
    assert values(sdf.test(record)) == [expected]


def test_the_source_dataframe_runs_inside_the_step_not_as_a_branch():
    sdf = StreamingDataFrame(Topic("t"))
    calls = []
    source = sdf.apply(lambda v: calls.append(dict(v)) or v["n"])
    sdf["m"] = source
    sdf["m2"] = sdf["m"] * 2
    assert sdf.test({"n": 3}) == [({"n": 3, "m": 3, "m2": 6}, b"key", 0, None)]  # one output, not two
    assert calls == [{"n": 3}]
    source.apply(lambda v: v + 100)  # steps added to the used dataframe later change nothing
    assert values(sdf.test({"n": 1})) == [{"n": 1, "m": 1, "m2": 2}]


def test_stateful_source_keeps_state_per_key_across_test_calls():
    sdf = StreamingDataFrame(Topic("t"))
    sdf["seen"] = sdf.apply(count_seen, stateful=True)
    assert [values(sdf.test({}, key=k))[0]["seen"] for k in (b"a", b"a", b"b", b"a")] == [1, 2, 1, 3]


def _other_topic(sdf):
    return sdf[StreamingDataFrame(Topic("other")).apply(lambda v: True)]


def _sibling(sdf):
    a = sdf.apply(lambda v: v)
    return a[sdf.apply(lambda v: True)]


def _parent(sdf):
    return sdf.apply(lambda v: v)[sdf]


def _twice(sdf):
    source = sdf.apply(lambda v: True)
    sdf[source]
    return sdf[source]


def _branched_between(sdf):
    mid = sdf.apply(lambda v: v)
    mid.apply(lambda v: False)
    return sdf[mid.apply(lambda v: True)]


def _changed_in_place_after_branching(sdf):
    source = sdf.apply(lambda v: True)
    sdf["y"] = 1
    return sdf[source]


def _merged(sdf):
    return sdf[sdf.apply(lambda v: v > 1).concat(sdf.apply(lambda v: v > 5))]


def _setitem_merged(sdf):
    sdf["x"] = sdf.apply(lambda v: 1).concat(sdf.apply(lambda v: 2))


def _setitem_other_topic(sdf):
    sdf["x"] = StreamingDataFrame(Topic("other")).apply(lambda v: 1)


@pytest.mark.parametrize(
    "use, message",
    [
        (lambda sdf: sdf[sdf], "same SDF"),
        (lambda sdf: sdf.__setitem__("x", sdf), "same SDF"),
        (_other_topic, "must originate from target SDF"),
        (_setitem_other_topic, "must originate from target SDF"),
        (_sibling, "branched SDF"),
        (_parent, "must originate from target SDF"),
        (_twice, "more than once"),
        (_branched_between, "branched SDF"),
        (_changed_in_place_after_branching, "branched SDF"),
        (_merged, "merged with another SDF"),
        (_setitem_merged, "merged with another SDF"),
    ],
)
def test_dataframe_sources_that_are_refused(use, message):
    with pytest.raises(InvalidOperation, match=message):
        use(StreamingDataFrame(Topic("t")))


@pytest.mark.parametrize(
    "source, message",
    [
        (lambda sdf: sdf.filter(lambda v: True), "Filter functions are not allowed"),
        (lambda sdf: sdf.apply(lambda v: v).update(lambda v: None), "Update functions are not allowed"),
        (lambda sdf: sdf.apply(lambda v: [v], expand=True), "Expand functions are not allowed"),
        (lambda sdf: sdf.set_timestamp(lambda v, k, t, h: t), "Transform functions are not allowed"),
        (lambda sdf: sdf.tumbling_window(10).count().final(), "Transform functions are not allowed"),
        (lambda sdf: sdf.group_by("x"), "Transform functions are not allowed"),
    ],
)
def test_dataframe_sources_with_other_than_apply_steps_raise_value_error(source, message):
    sdf = StreamingDataFrame(Topic("t"))
    with pytest.raises(ValueError, match=message):
        sdf[source(sdf)]


# --- column access rules ---------------------------------------------------------------------


@pytest.mark.parametrize("item, error", [(0, TypeError), (("a",), TypeError), (None, TypeError), ("", ValueError)])
def test_getitem_rejects_unsupported_keys(sdf, item, error):
    with pytest.raises(error):
        sdf[item]


def test_setitem_from_another_dataframes_series_is_refused(sdf):
    other = sdf.apply(lambda v: v)
    with pytest.raises(InvalidOperation, match="must originate from target SDF"):
        other["x"] = sdf["a"]
    # filtering with another dataframe's series is allowed, as in the reference
    assert values(other[sdf["a"] > 0].test({"a": 1})) == [{"a": 1}]


@pytest.mark.parametrize("use", [bool, lambda s: s and 1, lambda s: not s, lambda s: 1 if s else 0])
def test_dataframe_has_no_truth_value(sdf, use):
    with pytest.raises(InvalidOperation, match="truth level"):
        use(sdf)


# --- group_by rules --------------------------------------------------------------------------


def test_group_bys_branching_from_one_dataframe_with_different_names():
    sdf = StreamingDataFrame(Topic("orders"))
    by_customer = sdf.group_by("customer")
    by_store = sdf.group_by(lambda v: v["store"], name="store")
    assert (by_customer.stream_id, by_store.stream_id) == ("orders--groupby--customer", "orders--groupby--store")
    out = sdf.test({"customer": "c1", "store": "s1"}, key=b"k")
    assert sorted(r[1] for r in out) == ["c1", "s1"]


def _nested(sdf):
    sdf.group_by("a").group_by("b")


def _nested_after_steps(sdf):
    sdf.group_by("a").apply(lambda v: v).group_by("b")


def _same_column(sdf):
    sdf.group_by("a")
    sdf.apply(lambda v: v).group_by("a")  # another branch of the same stream


def _same_name(sdf):
    sdf.group_by("a", name="n")
    sdf.group_by(lambda v: v["b"], name="n")


def _name_equals_column(sdf):
    sdf.group_by("a")
    sdf.group_by(lambda v: v["b"], name="a")


@pytest.mark.parametrize(
    "use, error",
    [
        (_nested, GroupByNestingLimit),
        (_nested_after_steps, GroupByNestingLimit),
        (_same_column, GroupByDuplicate),
        (_same_name, GroupByDuplicate),
        (_name_equals_column, GroupByDuplicate),
        (lambda sdf: sdf.group_by(""), ValueError),
        (lambda sdf: sdf.group_by(None), ValueError),  # type: ignore[arg-type]
        (lambda sdf: sdf.group_by(lambda v: v), ValueError),
        (lambda sdf: sdf.group_by(lambda v: v, name=""), ValueError),
        # a key that is not a column name needs a name first (as for a function)
        (lambda sdf: sdf.group_by(5), ValueError),  # type: ignore[arg-type]
        (lambda sdf: sdf.group_by(["a"]), ValueError),  # type: ignore[arg-type]
        (lambda sdf: sdf.group_by(5, name="five"), TypeError),  # type: ignore[arg-type]
    ],
)
def test_group_by_refusals(use, error):
    with pytest.raises(error):
        use(StreamingDataFrame(Topic("t")))


def test_group_by_refusals_are_group_by_limit_exceeded_too():
    sdf = StreamingDataFrame(Topic("t"))
    sdf.group_by("a")
    with pytest.raises(GroupByLimitExceeded):
        sdf.group_by("a")


def test_set_headers_receives_a_list_copy(sdf):
    seen = []
    headers = [("a", b"1")]
    out = sdf.set_headers(lambda v, k, t, h: seen.append(h) or h + [("b", b"2")]).test(1, headers=headers)
    assert seen == [[("a", b"1")]] and seen[0] is not headers and out[0][3] == [("a", b"1"), ("b", b"2")]
    assert StreamingDataFrame(Topic("t")).set_headers(lambda v, k, t, h: h).test(1)[0][3] == []


def test_register_store_is_a_no_op_that_warns_once():
    """Spark's state store replaces registered stores: one warning per process, state still works."""
    script = textwrap.dedent("""
        import logging
        from streamspark.dataframe import StreamingDataFrame
        from streamspark.models import Topic

        logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s %(message)s")
        sdf = StreamingDataFrame(Topic("t"))
        assert sdf.register_store() is None
        assert sdf.register_store(store_type="rocksdb") is None

        def count(value, state):
            state.set("n", state.get("n", 0) + 1)
            return state.get("n")

        sdf = sdf.apply(count, stateful=True)
        print([sdf.test(1, key=b"k")[0][0] for _ in range(3)])
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True)
    warnings = [line for line in done.stderr.splitlines() if "register_store" in line]
    assert len(warnings) == 1, done.stderr
    assert warnings[0].startswith("WARNING streamspark.dataframe.dataframe ")
    assert "Spark's state store" in warnings[0]
    assert done.stdout.strip() == "[1, 2, 3]"


def test_topics_lists_the_input_topics_of_every_branch():
    readings, configs = Topic("readings"), Topic("configs")
    sdf = StreamingDataFrame(readings)
    assert sdf.topics == [readings]
    assert sdf.apply(lambda v: v).group_by("k").topics == [readings]
    merged = sdf.concat(StreamingDataFrame(configs))
    assert merged.topics == [readings, configs]
    assert merged.topics is not merged.topics  # a copy each time


def test_a_second_dataframe_of_one_topic_is_refused_with_the_reference_message():
    from streamspark import Application
    from streamspark.dataframe.exceptions import StreamingDataFrameDuplicate

    app = Application(broker_address="127.0.0.1:1", consumer_group="g", auto_create_topics=False)
    topic = app.topic("readings")
    app.dataframe(topic)
    with pytest.raises(StreamingDataFrameDuplicate, match="^There is already a StreamingDataFrame using topic readings"):
        app.dataframe(topic)


@pytest.mark.parametrize("method", ["apply", "update", "filter"])
def test_a_step_needs_a_callable(sdf, method):
    with pytest.raises(TypeError, match=rf"^{method}\(\) needs a function, got NoneType: None"):
        getattr(sdf, method)(None)


def test_filter_on_a_series_points_to_indexing(sdf):
    with pytest.raises(TypeError, match=r"use sdf\[series\]"):
        sdf.filter(sdf["a"] > 1)
