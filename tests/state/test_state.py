"""The State API and the keyed store (no Spark)."""

from __future__ import annotations

import dataclasses
import logging
import time
from dataclasses import dataclass
from datetime import datetime, timedelta

import pytest

from streamspark.state import KeyedStateStore, StateError, StateSerializationError


@dataclass
class _Point:
    x: int
    y: int


def test_get_set_delete_exists_and_copies():
    state = KeyedStateStore().state("s", b"k")
    assert state.get("x") is None and state.get("x", 5) == 5
    value = {"a": [1]}
    state.set("x", value)
    value["a"].append(2)  # the stored value is a copy
    assert state.get("x") == {"a": [1]}
    assert state.exists("x")
    assert state.delete("x") is None and state.delete("missing") is None
    assert not state.exists("x")


def test_bytes_roundtrip_and_type_errors():
    state = KeyedStateStore().state("s", "k")
    state.set_bytes("b", b"\\x00raw")
    assert state.get_bytes("b") == b"\\x00raw"
    state.set("j", [1])
    assert state.get_bytes("j") == b"[1]"
    with pytest.raises(StateSerializationError):
        state.set_bytes("b", "text")  # type: ignore[arg-type]
    with pytest.raises(StateSerializationError, match="not JSON-serialisable"):
        state.set("bad", object())


def test_ttl_expires_entries():
    store = KeyedStateStore()
    state = store.state("s", b"k")
    state.set("short", 1, ttl=timedelta(milliseconds=50))
    state.set("long", 2, ttl=timedelta(hours=1))
    assert state.exists("short")
    time.sleep(0.08)
    assert not state.exists("short") and state.get("short", "gone") == "gone"
    assert state.get("long") == 2
    with pytest.raises(TypeError):
        state.set("x", 1, ttl=5)  # type: ignore[arg-type]


def test_scoping_by_stream_and_key_and_blob_roundtrip():
    store = KeyedStateStore(buckets=8)
    store.state("s1", b"a").set("n", 1)
    store.state("s1", b"b").set("n", 2)
    store.state("s2", b"a").set("n", 3)
    store.state("s1", None).set("n", 4)
    store.state("s1", {"id": 1}).set("n", 5)
    again = KeyedStateStore.loads(store.dumps(), buckets=8)
    assert [
        again.state(s, k).get("n") for s, k in [("s1", b"a"), ("s1", b"b"), ("s2", b"a"), ("s1", None), ("s1", {"id": 1})]
    ] == [1, 2, 3, 4, 5]
    with pytest.raises(StateError, match="state_buckets=8"):
        KeyedStateStore.loads(store.dumps(), buckets=16)


def test_expired_entries_are_not_persisted():
    store = KeyedStateStore(buckets=1)
    store.state("s", b"k").set("t", 1, ttl=timedelta(milliseconds=1))
    time.sleep(0.01)
    assert len(KeyedStateStore.loads(store.dumps(), buckets=1)) == 0


def test_state_getter_scopes_like_state_and_survives_a_purge():
    store = KeyedStateStore(buckets=1)
    clicks, views = store.state_getter("clicks", "apply(count)"), store.state_getter("views")
    clicks(b"u1").set("n", 1)
    clicks(b"u1").set("n", clicks(b"u1").get("n") + 1)
    views(b"u1").set("n", 10)
    clicks(1).set("n", 7)  # not bytes: scoped by its JSON, like state()
    clicks(True).set("n", 8)  # equal to 1 in Python, a different key in state
    assert [store.state(s, k).get("n") for s, k in [("clicks", b"u1"), ("views", b"u1"), ("clicks", 1), ("clicks", True)]] == [
        2,
        10,
        7,
        8,
    ]
    # a purge drops the key's emptied entries: a later set through the getter must still persist
    clicks(b"u1").delete("n")
    store.purge_expired()
    clicks(b"u1").set("n", 3)
    assert KeyedStateStore.loads(store.dumps(), buckets=1).state("clicks", b"u1").get("n") == 3
    with pytest.raises(StateSerializationError, match=r"apply\(count\)"):
        clicks(b"u2").set("bad", object())


def test_state_under_the_reference_paths_is_generic_and_ttl_is_keyword_only():
    from streamspark import State as top_level
    from streamspark.state.base.state import State

    assert top_level is State
    assert State[str, int] is not None  # usable in type hints: State[K, V]
    state = KeyedStateStore().state("s", b"k")
    assert isinstance(state, State)
    with pytest.raises(TypeError):
        state.set("x", 1, timedelta(seconds=5))  # type: ignore[misc]
    state.set("x", 1, ttl=timedelta(seconds=5))
    assert state.get("x") == 1


def test_a_value_json_cannot_encode_fails_with_the_reference_message():
    state = KeyedStateStore().state("s", "k")
    with pytest.raises(StateSerializationError, match=r"^Failed to serialize value: \"b'raw'\""):
        state.set("bad", b"raw")


@pytest.mark.parametrize(
    "value",
    [
        {1: "a non-string dict key"},
        {"nested": {None: 1}},
        datetime(2024, 1, 2, 3, 4, 5),
        _Point(1, 2),
    ],
    ids=["int-dict-key", "nested-none-dict-key", "datetime", "dataclass"],
)
def test_values_that_would_not_come_back_as_set_are_refused(value):
    """Values come back as they were set: a dict with non-string keys, a datetime or a
    dataclass would come back as something else, so they are refused."""
    state = KeyedStateStore().state("s", b"k")
    with pytest.raises(StateSerializationError, match=r"^Failed to serialize value: "):
        state.set("x", value)
    assert not state.exists("x")


def test_keys_are_json_values_and_lists_name_the_same_entry_as_tuples():
    state = KeyedStateStore().state("s", b"k")
    state.set(["a", [1, 2]], "list")
    assert state.get(("a", (1, 2))) == "list"
    assert state.exists(["a", (1, 2)])
    state.set(None, "none")
    state.set(3, "int")
    state.set(b"raw", "bytes")
    assert (state.get(None), state.get(3), state.get("3"), state.get(b"raw")) == ("none", "int", None, "bytes")
    state.delete(("a", [1, 2]))
    assert state.get(["a", [1, 2]]) is None


@pytest.mark.parametrize("key", [object(), datetime(2024, 1, 1)], ids=["object", "datetime"])
def test_keys_that_are_not_json_values_are_refused(key):
    state = KeyedStateStore().state("s", b"k")
    for call in (lambda: state.set(key, 1), lambda: state.get(key), lambda: state.exists(key), lambda: state.delete(key)):
        with pytest.raises(StateSerializationError):
            call()


def test_get_reads_bytes_stored_by_set_bytes_as_json():
    state = KeyedStateStore().state("s", b"k")
    state.set_bytes("j", b'{"a": [1]}')
    assert state.get("j") == {"a": [1]}
    state.set_bytes("raw", b"\x00raw")
    with pytest.raises(StateSerializationError, match="get_bytes"):
        state.get("raw")
    assert state.get_bytes("raw") == b"\x00raw"


def test_keys_python_finds_equal_but_json_does_not_are_different_keys():
    state = KeyedStateStore().state("s", b"k")
    state.set(1, "int")
    state.set(True, "bool")
    state.set(1.0, "float")
    state.set((1, True), "tuple")
    assert [state.get(1), state.get(True), state.get(1.0), state.get([1, 1]), state.get([1, True])] == [
        "int",
        "bool",
        "float",
        None,
        "tuple",
    ]
    assert not state.exists(False) and not state.exists(0.0)
    state.delete(True)
    assert state.get(1) == "int" and state.get(True) is None


def test_a_dict_is_a_state_key_like_any_json_value():
    store = KeyedStateStore(buckets=1)
    state = store.state("s", b"k")
    assert state.get({"a": 1}) is None
    state.set({"a": 1, "b": [2]}, "dict")
    assert state.get({"a": 1, "b": [2]}) == "dict" and state.get({"a": 1}) is None
    assert KeyedStateStore.loads(store.dumps(), buckets=1).state("s", b"k").get({"a": 1, "b": [2]}) == "dict"


@pytest.mark.parametrize("ttl", [timedelta(0), timedelta(milliseconds=-5)], ids=["zero", "negative"])
def test_a_ttl_that_is_not_positive_is_refused(ttl):
    state = KeyedStateStore().state("s", b"k")
    with pytest.raises(ValueError, match="positive"):
        state.set("x", 1, ttl=ttl)
    with pytest.raises(ValueError, match="positive"):
        state.set_bytes("x", b"1", ttl=ttl)
    assert not state.exists("x")


def test_rocksdb_options_import_from_the_reference_path_and_are_accepted_with_a_note(caplog, monkeypatch):
    import streamspark.app as app_module
    from streamspark import Application
    from streamspark.state.rocksdb import RocksDBOptions
    from streamspark.state.rocksdb.options import RocksDBOptions as by_module

    assert by_module is RocksDBOptions
    options = RocksDBOptions(open_max_retries=0, open_retry_backoff=0.5, compression_type="zstd")
    assert (options.open_max_retries, options.open_retry_backoff, options.on_corrupted_recreate) == (0, 0.5, False)
    assert options.loads(options.dumps({"a": 1})) == {"a": 1}
    with pytest.raises(dataclasses.FrozenInstanceError):
        options.open_max_retries = 3  # type: ignore[misc]
    with pytest.raises(TypeError):
        RocksDBOptions(no_such_option=1)  # type: ignore[call-arg]
    monkeypatch.setattr(app_module, "_warned_ignored", set())
    with caplog.at_level(logging.WARNING, logger="streamspark"):
        app = Application(broker_address="127.0.0.1:9092", loglevel=None, rocksdb_options=options)
    assert app.config.rocksdb_options is options
    assert "spark.sql.streaming.stateStore.rocksdb" in caplog.text
