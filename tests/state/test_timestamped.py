"""``TimestampedStore``: values by key and timestamp, the grace period, duplicates, persistence."""

from __future__ import annotations

import pytest

from streamspark.state import KeyedStateStore, StateSerializationError
from streamspark.state.timestamped import TimestampedStore


def test_latest_at_or_before_and_replacing_a_timestamp():
    store = TimestampedStore(KeyedStateStore(), "s/join", grace_ms=1000)
    assert store.get_latest(100, b"k") is None
    store.set_for_timestamp(20, {"v": 2}, b"k")
    store.set_for_timestamp(10, {"v": 1}, b"k")  # out of order: kept sorted
    assert [store.get_latest(t, b"k") for t in (9, 10, 19, 20, 99)] == [None, {"v": 1}, {"v": 1}, {"v": 2}, {"v": 2}]
    store.set_for_timestamp(10, {"v": "again"}, b"k")
    assert store.get_latest(15, b"k") == {"v": "again"}
    assert store.get_latest(15, b"other") is None


def test_grace_expires_per_key_and_never_lowers():
    store = TimestampedStore(KeyedStateStore(), "s/join", grace_ms=100)
    store.set_for_timestamp(10, 1, b"k")
    store.set_for_timestamp(10, 1, b"j")
    store.set_for_timestamp(500, 5, b"k")  # k keeps >= 400 only
    store.set_for_timestamp(450, 4, b"k")  # an older value within the grace period
    store.set_for_timestamp(50, 0, b"k")  # older than 400: stored and expired at once
    assert store.get_latest(300, b"k") is None
    assert store.get_latest(460, b"k") == 4
    assert store.get_latest(300, b"j") == 1  # another key is not affected
    assert store.get_interval(0, 1000, b"k") == [4, 5]


def test_interval_with_duplicates_in_insertion_order():
    store = TimestampedStore(KeyedStateStore(), "s/join", grace_ms=1000, keep_duplicates=True)
    for ts, v in [(10, "a"), (20, "b"), (10, "c"), (30, "d")]:
        store.set_for_timestamp(ts, v, None)
    assert store.get_interval(10, 21, None) == ["a", "c", "b"]
    assert store.get_interval(11, 30, None) == ["b"]
    assert store.get_interval(31, 40, None) == []


def test_values_are_copies_and_must_be_json():
    store = TimestampedStore(KeyedStateStore(), "s/join", grace_ms=10)
    value = {"n": [1]}
    store.set_for_timestamp(1, value, b"k")
    value["n"].append(2)
    got = store.get_latest(1, b"k")
    got["n"].append(3)
    assert store.get_latest(1, b"k") == {"n": [1]}
    with pytest.raises(StateSerializationError):
        store.set_for_timestamp(2, {1, 2}, b"k")


def test_survives_the_bucket_blob_round_trip():
    states = KeyedStateStore(buckets=4)
    TimestampedStore(states, "s/join", grace_ms=10).set_for_timestamp(5, {"v": 1}, b"k")
    restored = KeyedStateStore.loads(states.dumps(), 4)
    assert TimestampedStore(restored, "s/join", grace_ms=10).get_latest(6, b"k") == {"v": 1}
    assert TimestampedStore(restored, "other/join", grace_ms=10).get_latest(6, b"k") is None


def test_every_store_of_a_scope_sees_the_same_values_whatever_the_key_type():
    states = KeyedStateStore()
    reader = TimestampedStore(states, "s/join", grace_ms=1000)
    writer = TimestampedStore(states, "s/join", grace_ms=1000)
    assert reader.get_latest(10, b"k") is None  # looked up before anything is stored
    writer.set_for_timestamp(5, {"v": 1}, b"k")
    assert reader.get_latest(10, b"k") == {"v": 1}
    assert reader.get_interval(0, 10, b"k") == [{"v": 1}]
    # a str key scopes state as its JSON: "j" and b'"j"' are the same key of the bucket
    writer.set_for_timestamp(5, {"v": 2}, "j")
    assert reader.get_latest(10, b'"j"') == {"v": 2}
    reader.set_for_timestamp(6, {"v": 3}, b'"j"')
    assert writer.get_latest(10, "j") == {"v": 3}
    restored = KeyedStateStore.loads(states.dumps(), 0)
    assert TimestampedStore(restored, "s/join", grace_ms=1000).get_latest(10, "j") == {"v": 3}
