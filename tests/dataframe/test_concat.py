"""``StreamingDataFrame.concat``: branches of one topic and dataframes of different topics, in ``sdf.test()``."""

from __future__ import annotations

import pytest

from streamspark.dataframe import InvalidOperation, StreamingDataFrame
from streamspark.models import Topic

A, B = Topic("a"), Topic("b")


def values(results):
    return [value for value, *_ in results]


@pytest.mark.parametrize(
    "n, expected",
    [
        pytest.param(1, [{"n": 1, "side": "small", "seen": 1}], id="only the first branch passes"),
        pytest.param(50, [{"n": 50, "side": "big", "seen": 1}], id="only the second branch passes"),
        pytest.param(
            5,
            [{"n": 5, "side": "small", "seen": 1}, {"n": 5, "side": "big", "seen": 1}],
            id="both pass: once per branch, in branch order",
        ),
        pytest.param(-1, [], id="neither passes"),
    ],
)
def test_concat_of_branches_of_one_topic(n, expected):
    sdf = StreamingDataFrame(A)
    small = sdf[(sdf["n"] >= 0) & (sdf["n"] < 10)].apply(lambda v: {**v, "side": "small"})
    big = sdf[sdf["n"] >= 5].apply(lambda v: {**v, "side": "big"})
    merged = small.concat(big)
    merged["seen"] = merged["n"].apply(lambda _: 1)  # a mutation below the merge: each record has its own copy
    assert values(merged.test({"n": n})) == expected
    assert merged.stream_id == "a"


def test_concat_of_different_topics():
    readings, alerts = StreamingDataFrame(A), StreamingDataFrame(B).apply(lambda v: {"alert": v})
    merged = readings.concat(alerts).apply(lambda v: {**v, "merged": True})
    assert merged.stream_id == "a--b"
    assert merged.test({"x": 1}, key=b"k", timestamp=5, topic=A) == [({"x": 1, "merged": True}, b"k", 5, None)]
    assert merged.test("hot", topic=B) == [({"alert": "hot", "merged": True}, b"key", 0, None)]
    assert sorted(merged.compose()) == ["a", "b"]
    with pytest.raises(ValueError, match="Topic must be provided .* 'a', 'b'"):
        merged.test({"x": 1})
    with pytest.raises(KeyError, match="Topic 'c' is not an input of this StreamingDataFrame; its topics: 'a', 'b'"):
        merged.test({"x": 1}, topic=Topic("c"))
    # the dataframes that were merged keep testing from their own topic
    assert values(readings.test({"x": 2})) == [{"x": 2, "merged": True}]


def test_stateful_steps_after_a_concat_of_topics_share_state_per_key():
    def count(value, state):
        state.set("n", state.get("n", 0) + 1)
        return state.get("n")

    left, right = StreamingDataFrame(A), StreamingDataFrame(B)
    left_counts = left.apply(count, stateful=True)
    merged_counts = left.concat(right).apply(count, stateful=True)
    assert values(merged_counts.test(1, key=b"k", topic=A)) == [1, 1]  # left's own count, the merged count
    assert values(merged_counts.test(1, key=b"k", topic=B)) == [2]
    assert values(merged_counts.test(1, key=b"other", topic=B)) == [1]
    assert values(left_counts.test(1, key=b"k", topic=A)) == [2, 3]


def test_a_window_after_a_concat_of_topics_takes_records_of_both():
    merged = StreamingDataFrame(A).concat(StreamingDataFrame(B)).tumbling_window(10).sum().current()
    assert values(merged.test(1, timestamp=1, topic=A)) == [{"start": 0, "end": 10, "value": 1}]
    assert values(merged.test(2, timestamp=2, topic=B)) == [{"start": 0, "end": 10, "value": 3}]


def test_concat_of_a_concat():
    a, b, c = StreamingDataFrame(A), StreamingDataFrame(B), StreamingDataFrame(Topic("c"))
    merged = a.concat(b).concat(c.apply(str))
    assert merged.stream_id == "a--b--c"
    assert values(merged.test(1, topic=Topic("c"))) == ["1"]
    assert values(merged.test(1, topic=B)) == [1]


@pytest.mark.parametrize(
    "make, error, message",
    [
        pytest.param(lambda sdf: sdf.concat(sdf), InvalidOperation, "Cannot merge a SDF with itself", id="itself"),
        pytest.param(
            lambda sdf: sdf.concat(sdf.apply(str)),
            InvalidOperation,
            "already present in the topology",
            id="a downstream dataframe",
        ),
        pytest.param(
            lambda sdf: sdf.apply(str).concat(sdf),
            InvalidOperation,
            "already present in the topology",
            id="an upstream dataframe",
        ),
        pytest.param(
            lambda sdf: sdf.concat(StreamingDataFrame(B)).concat(sdf),
            InvalidOperation,
            "already present in the topology",
            id="upstream through a merge",
        ),
        pytest.param(lambda sdf: sdf.concat([1]), TypeError, "expects a StreamingDataFrame, got list", id="not a df"),
        pytest.param(
            lambda sdf: sdf.concat(StreamingDataFrame(B, registry=object())),
            InvalidOperation,
            "different applications",
            id="other application",
        ),
    ],
)
def test_bad_concat_is_refused(make, error, message):
    sdf = StreamingDataFrame(A, registry=object())
    with pytest.raises(error, match=message):
        make(sdf)
