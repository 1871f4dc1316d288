from __future__ import annotations

import pytest

from streamspark.models.topics.utils import merge_headers


def test_the_mappings_keys_replace_every_header_of_theirs_and_come_last():
    original = [("a", b"1"), ("b", b"2"), ("a", b"3")]
    # no stale "a" survives (a reader taking the last value of a key sees the new one)
    assert merge_headers(original, {"a": b"x", "c": "y"}) == [("b", b"2"), ("a", b"x"), ("c", "y")]
    assert original == [("a", b"1"), ("b", b"2"), ("a", b"3")]  # not modified


def test_empty_sides():
    original = [("a", b"1")]
    assert merge_headers(original, {}) is original
    assert merge_headers(None, {}) == []
    assert merge_headers([], {"a": None}) == [("a", None)]
    assert merge_headers((("a", b"1"),), {"b": b"2"}) == [("a", b"1"), ("b", b"2")]


def test_headers_must_be_a_list_or_tuple():
    with pytest.raises(ValueError, match="either a list or tuple"):
        merge_headers({("a", b"1")}, {"b": b"2"})  # type: ignore[arg-type]
