"""The keyed store's blob: pages decoded on demand, written back with the rest untouched (no Spark)."""

from __future__ import annotations

import pickle
import random
import time
from datetime import timedelta
from typing import Any

import pytest

from streamspark.state import KeyedStateStore, StateError
from streamspark.state.store import PAGE_SCOPES, SWEEP_SHARE

STREAMS = ("clicks", "views")


def _key(rng: random.Random, space: int) -> Any:
    """A message key as the engine hands it over: mostly bytes, sometimes None or a JSON value."""
    i = rng.randrange(space)
    if i % 17 == 0:
        return None
    if i % 13 == 0:
        return {"id": i}
    return b"user-%d" % i


def _model_key(stream: str, key: Any) -> tuple[str, str]:
    return stream, repr(key)


def _check(blob: bytes, model: dict[tuple[str, str], dict[str, Any]], keys: dict[tuple[str, str], Any]) -> None:
    """Every key of the model reads back from ``blob`` as the model has it."""
    store = KeyedStateStore.loads(blob, buckets=4)
    assert len(store) == len([entries for entries in model.values() if entries])
    for (stream, _), key in keys.items():
        expected = model.get(_model_key(stream, key), {})
        state = store.state(stream, key)
        for name in ("n", "tag"):
            assert state.get(name) == expected.get(name), (stream, key, name)


@pytest.mark.parametrize("seed", range(6))
def test_random_updates_over_many_blob_writes_read_back_as_a_dict_would(seed):
    """Rounds of random sets and deletes over a key space that grows (the pages double several
    times), each round on a store loaded from the previous round's blob: every key reads back
    as a plain dict model has it, the touched keys' pages only are decoded, and a round that
    touches a few keys decodes a few pages."""
    rng = random.Random(seed)
    model: dict[tuple[str, str], dict[str, Any]] = {}
    keys: dict[tuple[str, str], Any] = {}
    blob = KeyedStateStore(buckets=4).dumps()
    for round_ in range(12):
        store = KeyedStateStore.loads(blob, buckets=4)
        space = 40 * (round_ + 1) ** 2  # up to ~5,800 keys
        touched = rng.randrange(1, 400)
        for _ in range(touched):
            stream, key = rng.choice(STREAMS), _key(rng, space)
            keys[_model_key(stream, key)] = key
            entries = model.setdefault(_model_key(stream, key), {})
            state = store.state(stream, key)
            op = rng.random()
            if op < 0.6:
                n = state.get("n", 0) + 1
                state.set("n", n)
                entries["n"] = n
            elif op < 0.8:
                state.set("tag", f"t{round_}")
                entries["tag"] = f"t{round_}"
            else:
                state.delete("n")
                entries.pop("n", None)
        pages_of_blob = _pages(blob)
        if pages_of_blob:
            # at most a page per key asked for
            assert store.decoded_pages() <= min(touched, pages_of_blob)
        blob = store.dumps()
        _check(blob, model, keys)
    # the layout keeps PAGE_SCOPES to twice that many keys in a page, on average
    live = len([e for e in model.values() if e])
    assert live / _pages(blob) <= 2 * PAGE_SCOPES


def _pages(blob: bytes) -> int:
    return len(pickle.loads(blob)[3])


def test_a_micro_batch_touching_one_key_decodes_one_page_and_keeps_the_others_byte_for_byte():
    store = KeyedStateStore(buckets=1)
    for i in range(2000):
        store.state("clicks", b"user-%d" % i).set("n", i)
    blob = store.dumps()
    again = KeyedStateStore.loads(blob, buckets=1)
    again.state("clicks", b"user-42").set("n", -1)
    assert again.decoded_pages() == 1
    after = again.dumps()
    before_pages, after_pages = pickle.loads(blob)[3], pickle.loads(after)[3]
    assert len(before_pages) == len(after_pages) > 100
    changed = [i for i, (a, b) in enumerate(zip(before_pages, after_pages)) if a != b]
    assert len(changed) == 1
    final = KeyedStateStore.loads(after, buckets=1)
    assert [final.state("clicks", b"user-%d" % i).get("n") for i in (41, 42, 43)] == [41, -1, 43]
    assert len(final) == 2000


def test_a_blob_of_the_earlier_format_is_read_and_written_in_pages():
    """A checkpoint written before pages (format 2: one dict of every key) carries on."""
    data = {("clicks", b"u%d" % i): {"n": (0, b"%d" % i, None)} for i in range(100)}
    windows = {("w", b"u1"): {"latest": 5}}
    old = pickle.dumps((2, 4, data, windows), protocol=pickle.HIGHEST_PROTOCOL)
    store = KeyedStateStore.loads(old, buckets=4)
    assert store.state("clicks", b"u7").get("n") == 7
    assert store.window_data("w", b"u1") == {"latest": 5}
    store.state("clicks", b"u7").set("n", 70)
    again = KeyedStateStore.loads(store.dumps(), buckets=4)
    assert [again.state("clicks", b"u%d" % i).get("n") for i in (6, 7, 8)] == [6, 70, 8]
    assert again.window_data("w", b"u1") == {"latest": 5}
    assert len(again) == 101
    with pytest.raises(StateError, match="state_buckets=4"):
        KeyedStateStore.loads(old, buckets=8)


def test_expired_entries_of_keys_nobody_reads_are_dropped_within_a_sweep():
    store = KeyedStateStore(buckets=1)
    for i in range(3000):
        state = store.state("s", b"k%d" % i)
        state.set("t", i, ttl=timedelta(milliseconds=50))
        if i % 2:
            state.set("keep", i)
    blob = store.dumps()
    assert len(KeyedStateStore.loads(blob, buckets=1)) == 3000
    time.sleep(0.1)
    # a reader sees no expired entry at once; writes drop them a share of the pages at a time
    reader = KeyedStateStore.loads(blob, buckets=1)
    assert reader.state("s", b"k2").get("t") is None and reader.state("s", b"k3").get("keep") == 3
    sizes = []
    for _ in range(SWEEP_SHARE):
        blob = KeyedStateStore.loads(blob, buckets=1).dumps()
        sizes.append(len(KeyedStateStore.loads(blob, buckets=1)))
    assert sizes[0] < 3000 and sizes == sorted(sizes, reverse=True)
    assert sizes[-1] == 1500
    final = KeyedStateStore.loads(blob, buckets=1)
    assert [final.state("s", b"k%d" % i).get("t") for i in range(4)] == [None] * 4
    assert [final.state("s", b"k%d" % i).get("keep") for i in range(4)] == [None, 1, None, 3]


def test_windows_and_state_share_the_blob():
    store = KeyedStateStore(buckets=2)
    store.state("s", b"a").set("n", 1)
    store.window_data("win", b"a")["latest"] = 10
    again = KeyedStateStore.loads(store.dumps(), buckets=2)
    assert again.window_data("win", b"a") == {"latest": 10}
    assert again.state("s", b"a").get("n") == 1
