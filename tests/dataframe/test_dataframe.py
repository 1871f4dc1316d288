"""Every StreamingDataFrame operation through ``sdf.test()`` (no Spark, no broker)."""

from __future__ import annotations

import pytest

from streamspark import message_context
from streamspark.dataframe import StreamingDataFrame
from streamspark.dataframe.exceptions import InvalidOperation
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
    with pytest.raises(Exception, match=r"State value for key 'bad' in update\(keep\) in stream \"in\" .* not JSON-serialisable"):
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


def test_getitem_with_a_dataframe_is_rejected(sdf):
    with pytest.raises(InvalidOperation):
        sdf[sdf]


def test_contains_requires_all_keys(sdf):
    sdf["has"] = sdf.contains(["a", "b"])
    sdf["has_a"] = sdf.contains("a")
    assert values(sdf.test({"a": 1})) == [{"a": 1, "has": False, "has_a": True}]


def test_fill_missing_and_none(sdf):
    sdf.fill("x", y=2)
    assert values(sdf.test({"y": None, "x": 5})) == [{"y": 2, "x": 5}]
    assert values(sdf.test({})) == [{"x": None, "y": 2}]
    with pytest.raises(ValueError):
        sdf.fill()


def test_drop_raise_and_ignore(sdf):
    assert values(StreamingDataFrame(Topic("t")).drop(["a"]).test({"a": 1, "b": 2})) == [{"b": 2}]
    with pytest.raises(KeyError):
        StreamingDataFrame(Topic("t")).drop("zz").test({"a": 1})
    assert values(StreamingDataFrame(Topic("t")).drop("zz", errors="ignore").test({"a": 1})) == [{"a": 1}]
    with pytest.raises(TypeError):
        sdf.drop([1])


def test_set_timestamp_and_headers(sdf):
    out = sdf.set_timestamp(lambda v, k, t, h: t + v).set_headers(lambda v, k, t, h: [("t", str(t).encode())]).test(5, timestamp=10)
    assert out == [(5, b"key", 15, [("t", b"15")])]


def test_branches_get_independent_copies(sdf):
    a = sdf.apply(lambda v: v)
    a.update(lambda v: v.__setitem__("branch", "a"))
    b = sdf.apply(lambda v: v)
    b.update(lambda v: v.__setitem__("branch", "b"))
    out = values(sdf.test({"x": 1}))
    assert sorted(v["branch"] for v in out) == ["a", "b"]


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
    assert sorted(values(sdf.test(1))) == [1, 2]
    sink.flush()
    assert list(sink) == [1]
    with pytest.raises(TypeError):
        sdf.sink(object())


def test_message_context_available_in_callbacks(sdf):
    ctx = MessageContext(key=b"k", topic="in", partition=3, offset=42, size=0, timestamp=1)
    out = sdf.apply(lambda v: message_context().offset).test(None, ctx=ctx)
    assert values(out) == [42]


def test_print_and_print_table(sdf, capsys):
    sdf.print(pretty=False, metadata=True)
    sdf.print_table(size=1, title="T", columns=["a"])
    sdf.test({"a": 1, "b": 2}, key=b"k")
    printed = capsys.readouterr().out
    assert "{'value': {'a': 1, 'b': 2}, 'key': b'k', 'timestamp': 0, 'headers': None}" in printed
    assert "T\n+" in printed and "| _key" in printed and " a " in printed and " b " not in printed.split("T\n", 1)[1]


def test_compose_returns_function_per_topic(sdf):
    got = []
    sdf = sdf.apply(lambda v: v + 1)
    fn = sdf.compose(sink=lambda v, k, t, h: got.append(v))["in"]
    fn(1, b"k", 0, None)
    assert got == [2]
