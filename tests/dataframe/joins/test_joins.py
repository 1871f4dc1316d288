"""``join_asof`` and ``join_interval`` in ``sdf.test()``: the case tables, merge rules and bad input."""

from __future__ import annotations

from datetime import timedelta
from types import MappingProxyType

import pytest

from streamspark.dataframe import InvalidOperation, StreamingDataFrame
from streamspark.dataframe.joins import AsOfJoin, IntervalJoin, keep_left_merger, keep_right_merger, raise_merger
from streamspark.models import Topic
from streamspark.state import StateSerializationError

from .cases import CASES, L, build


def run_case(case, left_topic="left", right_topic="right"):
    left, right = StreamingDataFrame(Topic(left_topic)), StreamingDataFrame(Topic(right_topic))
    joined = build(left, right, case.config)
    out = []
    for _phase, side, value, key, ts in case.events:
        topic = left.topic if side == L else right.topic
        out.extend((v, k, t) for v, k, t, _h in joined.test(value, key=key, timestamp=ts, topic=topic))
    return out


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_join_cases(case):
    assert run_case(case) == case.expected


def test_asof_keeps_the_left_headers_and_interval_drops_them():
    left, right = StreamingDataFrame(Topic("l")), StreamingDataFrame(Topic("r"))
    asof = left.join_asof(right, how="left")
    interval = left.join_interval(right, how="left", name="interval")
    right_headers, left_headers = [("src", b"r")], [("src", b"l")]
    assert asof.test({"m": 1}, key=b"k", timestamp=5, headers=right_headers, topic=right.topic) == []
    out = asof.test({"t": 1}, key=b"k", timestamp=5, headers=left_headers, topic=left.topic)
    assert ({"m": 1, "t": 1}, b"k", 5, left_headers) in out
    assert ({"m": 1, "t": 1}, b"k", 5, []) in out  # the interval join's output: no headers


def test_raise_merger_fails_on_overlapping_columns():
    left, right = StreamingDataFrame(Topic("l")), StreamingDataFrame(Topic("r"))
    joined = left.join_asof(right)  # on_merge="raise" by default
    joined.test({"v": 1, "m": 2}, key=b"k", timestamp=1, topic=right.topic)
    with pytest.raises(ValueError, match=r"^Overlapping columns: v\. You need to provide either an \"on_merge\" value"):
        joined.test({"v": 3}, key=b"k", timestamp=2, topic=left.topic)
    assert joined.test({"t": 3}, key=b"k", timestamp=2, topic=left.topic) == [({"t": 3, "v": 1, "m": 2}, b"k", 2, None)]


def test_the_stored_right_value_is_a_copy():
    left, right = StreamingDataFrame(Topic("l")), StreamingDataFrame(Topic("r"))
    joined = left.join_asof(right, on_merge=lambda l, r: r)
    config = {"nested": {"n": 1}}
    joined.test(config, key=b"k", timestamp=1, topic=right.topic)
    config["nested"]["n"] = 99  # changing the original after it was stored
    first = joined.test({}, key=b"k", timestamp=2, topic=left.topic)[0][0]
    first["nested"]["n"] = 42  # changing an output
    assert joined.test({}, key=b"k", timestamp=3, topic=left.topic)[0][0] == {"nested": {"n": 1}}


def test_builtin_mergers_refuse_non_dict_values_with_a_clear_message():
    left, right = StreamingDataFrame(Topic("l")), StreamingDataFrame(Topic("r"))
    joined = left.join_asof(right, on_merge="keep-left")
    joined.test({"m": 1}, key=b"k", timestamp=1, topic=right.topic)
    with pytest.raises(TypeError, match="left record of the join is a int"):
        joined.test(5, key=b"k", timestamp=2, topic=left.topic)


def test_a_right_value_that_is_not_json_serialisable_is_a_state_error():
    left, right = StreamingDataFrame(Topic("l")), StreamingDataFrame(Topic("r"))
    joined = left.join_asof(right)
    with pytest.raises(StateSerializationError, match="not JSON-serialisable"):
        joined.test({"when": object()}, key=b"k", timestamp=1, topic=right.topic)


def test_mergers():
    assert keep_left_merger({"a": 1, "b": 1}, {"b": 2, "c": 2}) == {"a": 1, "b": 1, "c": 2}
    assert keep_right_merger({"a": 1, "b": 1}, {"b": 2, "c": 2}) == {"a": 1, "b": 2, "c": 2}
    assert keep_left_merger(None, None) == {} == keep_right_merger(None, None)
    assert raise_merger({"a": 1}, {"c": 2}) == {"a": 1, "c": 2}
    with pytest.raises(ValueError, match="Overlapping columns: a, b"):
        raise_merger({"a": 1, "b": 1, "x": 0}, {"b": 2, "a": 2})


@pytest.mark.parametrize("merger", [keep_left_merger, keep_right_merger, raise_merger])
@pytest.mark.parametrize("left, right", [({"a": 1, "b": [1]}, {"c": 2}), ({"a": 1}, None), (None, {"c": 2}), (None, None)])
def test_mergers_treat_plain_dicts_as_other_mappings_and_return_a_new_dict(merger, left, right):
    def as_mapping(record):
        return None if record is None else MappingProxyType(dict(record))

    merged = merger(left, right)
    assert merged == merger(as_mapping(left), as_mapping(right))
    assert list(merged) == list(merger(as_mapping(left), as_mapping(right)))  # the same key order
    assert merged is not left and merged is not right
    merged["added"] = True
    assert "added" not in (left or {}) and "added" not in (right or {})


@pytest.mark.parametrize(
    "call, error, match",
    [
        (lambda l, r: l.join_asof(r, how="outer"), ValueError, 'Invalid "how" value'),
        (lambda l, r: l.join_interval(r, how="cross"), ValueError, 'Invalid "how" value'),
        (lambda l, r: l.join_asof(r, on_merge="keep-both"), ValueError, 'Invalid "on_merge" value'),
        (
            lambda l, r: l.join_interval(r, grace_ms=100, backward_ms=101),
            ValueError,
            "backward_ms must not be greater than the grace_ms",
        ),
        (lambda l, r: l.join_asof(r, grace_ms=1.5), TypeError, "Timedelta must be"),
        (lambda l, r: l.join_asof(l), ValueError, "same topic is not yet supported"),
        (lambda l, r: l.join_asof(l.apply(lambda v: v)), ValueError, "same topic is not yet supported"),
        (lambda l, r: l.join_asof({"not": "a dataframe"}), TypeError, "StreamingDataFrame"),
    ],
    ids=[
        "asof how",
        "interval how",
        "on_merge",
        "backward > grace",
        "grace type",
        "self-join",
        "self-join of a branch",
        "not a dataframe",
    ],
)
def test_bad_arguments(call, error, match):
    left, right = StreamingDataFrame(Topic("l")), StreamingDataFrame(Topic("r"))
    with pytest.raises(error, match=match):
        call(left, right)


def test_joining_the_same_right_dataframe_twice_needs_a_name():
    left, other, right = StreamingDataFrame(Topic("l")), StreamingDataFrame(Topic("o")), StreamingDataFrame(Topic("r"))
    left.join_asof(right)
    with pytest.raises(InvalidOperation, match='stores the records of "r" in the store "join"'):
        other.join_asof(right)
    both = other.join_asof(right, name="second")
    both.test({"m": 1}, key=b"k", timestamp=1, topic=right.topic)
    assert both.test({"t": 1}, key=b"k", timestamp=2, topic=other.topic) == [({"m": 1, "t": 1}, b"k", 2, None)]


def test_join_arguments_take_timedeltas_and_defaults():
    join = IntervalJoin(how="inner", on_merge="raise", grace_ms=timedelta(seconds=2), backward_ms=timedelta(seconds=1))
    assert (join.grace_ms, join.backward_ms, join.forward_ms, join.store_name) == (2000, 1000, 0, "join")
    assert AsOfJoin(how="left", on_merge="raise", grace_ms=timedelta(days=7)).grace_ms == 7 * 24 * 3600 * 1000
    left, right = StreamingDataFrame(Topic("l")), StreamingDataFrame(Topic("r"))
    joined = left.join_asof(right)
    assert joined.stream_id == "l--r"


def test_steps_after_a_join_see_the_joined_records_and_keep_state_per_key():
    left, right = StreamingDataFrame(Topic("l")), StreamingDataFrame(Topic("r"))
    joined = left.join_asof(right, how="left")

    def count(value, state):
        state.set("n", state.get("n", 0) + 1)
        return {**value, "n": state.get("n")}

    counted = joined.apply(count, stateful=True)
    counted.test({"m": "a"}, key=b"k", timestamp=1, topic=right.topic)
    assert [v for v, *_ in counted.test({"t": 1}, key=b"k", timestamp=2, topic=left.topic)] == [{"m": "a", "t": 1, "n": 1}]
    assert [v for v, *_ in counted.test({"t": 2}, key=b"k", timestamp=3, topic=left.topic)] == [{"m": "a", "t": 2, "n": 2}]
    assert [v for v, *_ in counted.test({"t": 3}, key=b"j", timestamp=3, topic=left.topic)] == [{"t": 3, "n": 1}]


def test_a_join_of_a_grouped_with_an_ungrouped_dataframe_is_refused_before_spark_starts():
    from streamspark.core.stream import InvalidTopology
    from streamspark.engine._plan import PipelinePlan

    def plan(*sdfs):
        roots = {s.topic.name: s.stream.root() for s in sdfs}
        return PipelinePlan(
            run_id="r",
            topics={s.topic.name: s.topic for s in sdfs},
            roots=roots,
            producer_config={},
            on_consumer_error=bool,
            on_processing_error=bool,
            on_producer_error=bool,
        )

    left, right = StreamingDataFrame(Topic("l")), StreamingDataFrame(Topic("r"))
    left.group_by("device").join_asof(right)
    with pytest.raises(InvalidTopology, match=r"join\(AsOfJoin.*group_by\(\) both dataframes"):
        plan(left, right).validate()
    a, b = StreamingDataFrame(Topic("a")), StreamingDataFrame(Topic("b"))
    a.group_by("device").join_asof(b.group_by("device"))
    plan(a, b).validate()  # both grouped: runs after the shuffle
    c, d = StreamingDataFrame(Topic("c")), StreamingDataFrame(Topic("d"))
    c.group_by("device").concat(d).apply(lambda v: v)  # stateless after the merge: fine
    plan(c, d).validate()


def test_joining_topics_whose_keys_are_read_differently_warns(caplog):
    left = StreamingDataFrame(Topic("l", key_deserializer="str"))
    right = StreamingDataFrame(Topic("r", key_deserializer="bytes"))
    with caplog.at_level("WARNING", logger="streamspark"):
        joined = left.join_asof(right, how="left")
    assert 'Joining "l" (keys read by StringDeserializer) with "r" (keys read by BytesDeserializer)' in caplog.text
    joined.test({"m": 1}, key=b"d1", timestamp=1, topic=right.topic)
    assert joined.test({"t": 1}, key="d1", timestamp=2, topic=left.topic) == [({"t": 1}, "d1", 2, None)]


def test_the_same_right_dataframe_joins_twice_into_its_own_join_under_another_name():
    left, right = StreamingDataFrame(Topic("l")), StreamingDataFrame(Topic("r"))
    first = left.join_asof(right, how="left", on_merge="keep-left", name="a")
    both = first.join_asof(right, how="left", on_merge="keep-right", name="b")
    assert both.stream_id == "l--r" and [t.name for t in both.topics] == ["l", "r"]
    assert both.test({"r": 1}, key=b"k", timestamp=1, topic=right.topic) == []
    assert both.test({"r": 2, "l": 0}, key=b"k", timestamp=2, topic=right.topic) == []
    # the first join keeps the left's "l", the second takes the right's
    assert both.test({"l": 1}, key=b"k", timestamp=3, topic=left.topic) == [({"l": 0, "r": 2}, b"k", 3, None)]
    assert both.test({"l": 1}, key=b"k", timestamp=1, topic=left.topic) == [({"l": 1, "r": 1}, b"k", 1, None)]


def test_the_same_right_dataframe_joins_twice_in_interval_joins():
    left, right = StreamingDataFrame(Topic("l")), StreamingDataFrame(Topic("r"))
    both = left.join_interval(right, how="outer", name="a").join_interval(right, how="outer", on_merge="keep-left", name="b")
    # the right record runs both joins: it comes out of the first (unmatched) and of the second
    assert both.test({"r": 1}, key=b"k", timestamp=1, topic=right.topic) == [({"r": 1}, b"k", 1, []), ({"r": 1}, b"k", 1, [])]
    assert both.test({"l": 1}, key=b"k", timestamp=1, topic=left.topic) == [({"l": 1, "r": 1}, b"k", 1, [])]


def test_a_store_name_used_twice_for_one_right_dataframe_is_a_store_already_registered_error():
    from streamspark.state.exceptions import StoreAlreadyRegisteredError

    left, right = StreamingDataFrame(Topic("l")), StreamingDataFrame(Topic("r"))
    first = left.join_asof(right, name="a")
    with pytest.raises(StoreAlreadyRegisteredError, match='store "a"'):
        first.join_asof(right, name="a")
    with pytest.raises(InvalidOperation):  # also an InvalidOperation, as before
        StreamingDataFrame(Topic("o")).join_asof(right, name="a")


@pytest.mark.parametrize("empty", [{}, 0, False, [], ""], ids=["dict", "zero", "false", "list", "str"])
def test_an_asof_left_join_merges_an_empty_right_value_as_none(empty):
    left, right = StreamingDataFrame(Topic("l")), StreamingDataFrame(Topic("r"))
    seen = []
    joined = left.join_asof(right, how="left", on_merge=lambda l, r: seen.append(r) or {**l, "right": r})
    joined.test(empty, key=b"k", timestamp=1, topic=right.topic)
    assert joined.test({"t": 1}, key=b"k", timestamp=2, topic=left.topic) == [({"t": 1, "right": None}, b"k", 2, None)]
    assert seen == [None]
    builtin = StreamingDataFrame(Topic("l2")).join_asof(StreamingDataFrame(Topic("r2")), how="left", on_merge="keep-left")
    builtin.test(empty, key=b"k", timestamp=1, topic=Topic("r2"))
    assert builtin.test({"t": 1}, key=b"k", timestamp=2, topic=Topic("l2")) == [({"t": 1}, b"k", 2, None)]


@pytest.mark.parametrize("merger", ["raise", "keep-left", "keep-right"])
def test_builtin_mergers_fail_on_non_dict_records_with_a_type_and_attribute_error(merger):
    left, right = StreamingDataFrame(Topic("l")), StreamingDataFrame(Topic("r"))
    joined = left.join_interval(right, how="outer", on_merge=merger)
    for error in (TypeError, AttributeError):  # the reference's "raise" merger fails with AttributeError
        with pytest.raises(error, match="left record of the join is a list"):
            joined.test([1], key=b"k", timestamp=1, topic=left.topic)
