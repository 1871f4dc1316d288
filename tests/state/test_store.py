"""The keyed store's blob: pages decoded on demand, written back with the rest untouched (no Spark)."""

from __future__ import annotations

import pickle
import random
import time
from datetime import timedelta
from typing import Any

import pytest

from streamspark.state import KeyedStateStore, StateError
from streamspark.state import blob_codec
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


def _fields(blob: bytes) -> tuple[Any, ...]:
    """The pickled fields of a blob (compressed or not)."""
    return pickle.loads(blob_codec.unpack(blob))


def _pages(blob: bytes) -> int:
    return len(_fields(blob)[3])


def test_a_micro_batch_touching_one_key_decodes_one_page_and_keeps_the_others_byte_for_byte():
    store = KeyedStateStore(buckets=1)
    for i in range(2000):
        store.state("clicks", b"user-%d" % i).set("n", i)
    blob = store.dumps()
    again = KeyedStateStore.loads(blob, buckets=1)
    again.state("clicks", b"user-42").set("n", -1)
    assert again.decoded_pages() == 1
    after = again.dumps()
    before_pages, after_pages = _fields(blob)[3], _fields(after)[3]
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


def test_a_blob_names_its_bucket_and_is_refused_as_another_buckets():
    """Read under another bucket's group key (a checkpoint that lost its state layout), a blob
    is refused instead of its keys going missing."""
    store = KeyedStateStore(buckets=16, bucket=5)
    store.state("clicks", b"u1").set("n", 1)
    blob = store.dumps()
    assert KeyedStateStore.loads(blob, 16, bucket=5).state("clicks", b"u1").get("n") == 1
    with pytest.raises(StateError, match="state of bucket 5 was read as bucket 9's.*streamspark-state.json"):
        KeyedStateStore.loads(blob, 16, bucket=9)
    # a store written again keeps naming its bucket
    again = KeyedStateStore.loads(blob, 16, bucket=5).dumps()
    with pytest.raises(StateError, match="bucket 5"):
        KeyedStateStore.loads(again, 16, bucket=6)


def test_a_blob_of_format_3_carries_on_under_any_bucket():
    """Blobs written before they named their bucket (format 3) are read as before."""
    page = pickle.dumps({("clicks", b"u1"): {"n": (0, b"3", None)}}, protocol=pickle.HIGHEST_PROTOCOL)
    old = pickle.dumps((3, 16, {}, [page], 1, False, 0), protocol=pickle.HIGHEST_PROTOCOL)
    store = KeyedStateStore.loads(old, 16, bucket=11)
    assert store.state("clicks", b"u1").get("n") == 3
    assert _fields(store.dumps())[0] == 4 and _fields(store.dumps())[-1] == 11


def test_expired_entries_of_keys_nobody_reads_are_dropped_within_a_sweep(monkeypatch):
    now = [1_700_000_000.0]
    monkeypatch.setattr(time, "time", lambda: now[0])  # the clock of State and of the store
    store = KeyedStateStore(buckets=1)
    for i in range(3000):
        state = store.state("s", b"k%d" % i)
        state.set("t", i, ttl=timedelta(seconds=5))
        if i % 2:
            state.set("keep", i)
    blob = store.dumps()
    assert len(KeyedStateStore.loads(blob, buckets=1)) == 3000
    now[0] += 6
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


def test_a_store_without_expiring_entries_records_none_until_a_ttl_is_written(monkeypatch):
    """A blob that holds no expiring entry says so, and a store loaded from it looks for none;
    an entry given a ``ttl`` afterwards (here, in a store loaded from that blob) is swept as
    before, and the blob says again that entries expire."""
    now = [1_700_000_000.0]
    monkeypatch.setattr(time, "time", lambda: now[0])
    store = KeyedStateStore(buckets=1)
    for i in range(3000):
        store.state("s", b"k%d" % i).set("n", i)
    blob = store.dumps()
    assert _fields(blob)[5] is False  # nothing expires
    loaded = KeyedStateStore.loads(blob, buckets=1)
    loaded.state("s", b"k1").set("n", -1)
    loaded.state("s", b"gone")  # read, never written: an empty key, dropped when written

    def no_clock() -> float:
        raise AssertionError("a store without expiring entries looked for expired ones")

    monkeypatch.setattr(time, "time", no_clock)  # only a look for expired entries reads the clock
    blob = loaded.dumps()
    monkeypatch.setattr(time, "time", lambda: now[0])
    assert _fields(blob)[5] is False and len(KeyedStateStore.loads(blob, buckets=1)) == 3000
    loaded = KeyedStateStore.loads(blob, buckets=1)
    loaded.state("s", b"k2").set("n", 2, ttl=timedelta(seconds=5))
    loaded.state("s", b"new").set("n", 0, ttl=timedelta(seconds=60))
    now[0] += 6
    blob = loaded.dumps()
    assert _fields(blob)[5] is True  # "new" expires later
    final = KeyedStateStore.loads(blob, buckets=1)
    assert len(final) == 3000  # k2 expired (the decoded keys are purged at once), "new" added
    assert final.state("s", b"k2").get("n") is None and final.state("s", b"new").get("n") == 0
    assert final.state("s", b"k3").get("n") == 3


def test_expired_entries_of_a_blob_of_the_earlier_format_are_dropped_when_written(monkeypatch):
    """A blob of format 2 does not record whether its entries expire: they are looked for."""
    now = [1_700_000_000.0]
    monkeypatch.setattr(time, "time", lambda: now[0])
    past, future = int(now[0] * 1000) - 1, int(now[0] * 1000) + 60_000
    data = {("clicks", b"u%d" % i): {"n": (0, b"%d" % i, past if i % 2 else future)} for i in range(10)}
    old = pickle.dumps((2, 4, data, {}), protocol=pickle.HIGHEST_PROTOCOL)
    written = KeyedStateStore.loads(old, buckets=4).dumps()
    assert _fields(written)[5] is True
    again = KeyedStateStore.loads(written, buckets=4)
    assert len(again) == 5
    assert [again.state("clicks", b"u%d" % i).get("n") for i in range(4)] == [0, None, 2, None]


def test_a_store_made_from_entries_that_expire_looks_for_expired_ones(monkeypatch):
    """Entries handed to the constructor whole (as formats 1 and 2 are) are looked through for
    an expiry, whatever the process wrote."""
    now = [1_700_000_000.0]
    monkeypatch.setattr(time, "time", lambda: now[0])
    data = {("s", b"a"): {"n": (0, b"1", int(now[0] * 1000) - 1)}, ("s", b"b"): {"n": (0, b"2", None)}}
    store = KeyedStateStore(data, buckets=1)
    assert len(KeyedStateStore.loads(store.dumps(), buckets=1)) == 1


def test_windows_and_state_share_the_blob():
    store = KeyedStateStore(buckets=2)
    store.state("s", b"a").set("n", 1)
    store.window_data("win", b"a")["latest"] = 10
    again = KeyedStateStore.loads(store.dumps(), buckets=2)
    assert again.window_data("win", b"a") == {"latest": 10}
    assert again.state("s", b"a").get("n") == 1


def test_keys_only_read_do_not_lay_every_page_out_again():
    """A step that reads keys it never sets (an empty state for each) must not make every write
    decode the whole bucket: only real growth lays the pages out again."""
    store = KeyedStateStore(buckets=1)
    for i in range(1000):
        store.state("s", b"k%d" % i).set("n", i)
    blob = store.dumps()
    pages = _pages(blob)
    for batch in range(20):
        again = KeyedStateStore.loads(blob, buckets=1)
        for j in range(30):
            assert again.state("s", b"unknown-%d-%d" % (batch, j)).get("n") is None
        again.state("s", b"k%d" % batch).set("n", -batch)
        blob = again.dumps()
        assert again.decoded_pages() <= 31 < pages
        assert _pages(blob) == pages and len(KeyedStateStore.loads(blob, buckets=1)) == 1000


def test_a_steady_count_of_expiring_keys_keeps_its_layout(monkeypatch):
    """Keys that come and go with a ttl (about 1,000 alive at any time): the writes sweep a share
    of the pages each, and none decodes every page once the layout fits."""
    now = [1_700_000_000.0]
    monkeypatch.setattr(time, "time", lambda: now[0])
    blob = KeyedStateStore(buckets=1).dumps()
    full = []
    for batch in range(80):
        store = KeyedStateStore.loads(blob, buckets=1)
        for j in range(20):
            store.state("s", b"k%d-%d" % (batch, j)).set("n", j, ttl=timedelta(seconds=50))
        now[0] += 1
        blob = store.dumps()
        full.append(store.decoded_pages() == _pages(blob))
    assert not any(full[60:])
    assert 900 <= len(KeyedStateStore.loads(blob, buckets=1)) <= 1100


def test_a_page_that_fails_to_load_is_written_back_as_it_was():
    store = KeyedStateStore(buckets=1)
    for i in range(500):
        store.state("s", b"k%d" % i).set("n", i)
    version, buckets, windows, pages, scopes, expiring, sweep, bucket = _fields(store.dumps())
    from streamspark.state.store import _page_of

    bad = _page_of(("s", b"k1"), len(pages))
    pages[bad] = b"\x80not a pickle"
    blob = pickle.dumps((version, buckets, windows, pages, scopes, expiring, sweep, bucket))
    broken = KeyedStateStore.loads(blob, buckets=1)
    with pytest.raises(Exception):
        broken.state("s", b"k1")
    other = next(b"k%d" % i for i in range(500) if _page_of(("s", b"k%d" % i), len(pages)) != bad)
    broken.state("s", other).set("n", -1)
    written = _fields(broken.dumps())[3]
    assert written[bad] == b"\x80not a pickle"
