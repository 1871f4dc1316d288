"""Compression of state blobs (no Spark): what goes in comes out, blobs stored uncompressed
are read as they are, and a damaged blob is a clear ``StateError``."""

from __future__ import annotations

import pickle
import random
import sys

import pytest

from streamspark.state import KeyedStateStore, StateError, blob_codec


@pytest.mark.parametrize("seed", range(4))
def test_random_blobs_come_back_byte_for_byte(seed):
    rng = random.Random(seed)
    for _ in range(30):
        size = rng.choice([0, 1, blob_codec.MIN_PACKED_SIZE - 1, blob_codec.MIN_PACKED_SIZE, rng.randrange(1, 300_000)])
        if rng.random() < 0.5:  # incompressible bytes
            blob = rng.randbytes(size)
        else:  # a pickle of repetitive records
            blob = pickle.dumps([(b"user-%d" % rng.randrange(1000), rng.randrange(9)) for _ in range(size // 16)])
        packed = blob_codec.pack(blob)
        assert blob_codec.unpack(packed) == blob
        # short blobs and blobs that do not compress are stored as they are; others behind the marker
        if len(blob) < blob_codec.MIN_PACKED_SIZE:
            assert packed == blob
        elif blob[:1] == b"\x80":  # a pickle of repetitive records compresses
            assert packed.startswith(blob_codec.MAGIC) and len(packed) < len(blob)
        else:
            assert packed == blob or len(packed) < len(blob)


def test_a_store_of_many_keys_is_stored_several_times_smaller_and_reads_back():
    store = KeyedStateStore(buckets=4, bucket=1)
    for i in range(20_000):
        store.state("clicks", b"user-%d" % i).set("n", i % 13)
    plain, packed = store.dumps(), store.dumps(compress=True)
    assert plain[:1] == b"\x80" and packed.startswith(blob_codec.MAGIC)
    assert len(packed) * 3 < len(plain)
    for blob in (plain, packed):
        again = KeyedStateStore.loads(blob, buckets=4, bucket=1)
        assert len(again) == 20_000
        assert [again.state("clicks", b"user-%d" % i).get("n") for i in (0, 12, 13, 19_999)] == [0, 12, 0, 19_999 % 13]


def test_stores_written_compressed_and_not_in_turn_keep_every_key():
    """A checkpoint carried on by the fast and the plain path in turn: each reads the other's blob."""
    blob = KeyedStateStore(buckets=1).dumps()
    for round_ in range(6):
        store = KeyedStateStore.loads(blob, buckets=1)
        for i in range(round_ * 500, (round_ + 1) * 500):
            store.state("s", b"k%d" % i).set("n", i)
        store.state("s", b"k0").set("n", -round_)
        blob = store.dumps(compress=round_ % 2 == 0)
        assert blob.startswith(blob_codec.MAGIC) == (round_ % 2 == 0)
    final = KeyedStateStore.loads(blob, buckets=1)
    assert len(final) == 3000
    assert final.state("s", b"k0").get("n") == -5
    assert [final.state("s", b"k%d" % i).get("n") for i in (1, 1499, 2999)] == [1, 1499, 2999]


def _store_of(keys: int) -> KeyedStateStore:
    store = KeyedStateStore(buckets=2, bucket=0)
    for i in range(keys):
        store.state("s", b"user-%d" % i).set("n", i)
    return store


def test_a_damaged_compressed_blob_is_named_as_damaged_state():
    """Cut short, zeroed, its header cut, its recorded length changed, or any single bit
    flipped: a compressed blob never loads as other state, it stops with a ``StateError``."""
    blob = _store_of(400).dumps(compress=True)
    assert blob.startswith(blob_codec.MAGIC)
    wrong_length = blob[:4] + (2**40).to_bytes(8, "little") + blob[12:]
    for damaged in (blob[: len(blob) // 2], blob[:20] + bytes(len(blob) - 20), blob[:6], wrong_length):
        with pytest.raises(StateError, match="damaged"):
            KeyedStateStore.loads(damaged, buckets=2, bucket=0)
    rng = random.Random(7)
    for _ in range(300):
        flipped = bytearray(blob)
        flipped[rng.randrange(len(blob))] ^= 1 << rng.randrange(8)
        with pytest.raises(StateError, match="damaged"):
            KeyedStateStore.loads(flipped, buckets=2, bucket=0)


def test_a_compressed_blob_read_with_another_layout_gives_that_error_not_damage():
    blob = _store_of(400).dumps(compress=True)
    with pytest.raises(StateError, match="state_buckets=2"):
        KeyedStateStore.loads(blob, buckets=4, bucket=0)
    with pytest.raises(StateError, match="bucket 0 was read as bucket 1's"):
        KeyedStateStore.loads(blob, buckets=2, bucket=1)


class Gone:
    """A window value of a class the program no longer has."""


def test_state_naming_a_class_that_is_gone_is_not_called_damaged(monkeypatch):
    store = _store_of(10)
    store.window_data("w", b"k")["v"] = Gone()
    blob = store.dumps(compress=True)
    monkeypatch.delattr(sys.modules[__name__], "Gone")
    with pytest.raises(AttributeError, match="Gone"):
        KeyedStateStore.loads(blob, buckets=2, bucket=0)


def test_a_blob_that_is_no_pickle_is_named_as_damaged_state():
    plain = _store_of(400).dumps()
    for damaged in (plain[: len(plain) // 3], b"\x80" + bytes(40)):
        with pytest.raises(StateError, match="could not be read.*damaged"):
            KeyedStateStore.loads(damaged, buckets=2, bucket=0)


def test_without_the_codec_blobs_are_stored_plain_and_a_compressed_one_is_refused_clearly(monkeypatch):
    store = _store_of(400)
    compressed = store.dumps(compress=True)
    monkeypatch.setattr(blob_codec, "_codec_available", lambda: False)
    plain = store.dumps(compress=True)
    assert plain[:1] == b"\x80"
    assert len(KeyedStateStore.loads(plain, buckets=2, bucket=0)) == 400
    with pytest.raises(StateError, match="Zstandard"):
        KeyedStateStore.loads(compressed, buckets=2, bucket=0)
