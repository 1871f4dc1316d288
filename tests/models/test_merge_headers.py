from __future__ import annotations

import pytest

from streamspark.models.topics.utils import merge_headers


def test_mapping_values_replace_the_first_header_of_their_key_and_the_rest_are_appended():
    original = [("a", b"1"), ("b", b"2"), ("a", b"3")]
    assert merge_headers(original, {"a": b"x", "c": "y"}) == [("a", b"x"), ("b", b"2"), ("a", b"3"), ("c", "y")]
    assert original == [("a", b"1"), ("b", b"2"), ("a", b"3")]  # not modified


def test_empty_sides():
    original = [("a", b"1")]
    assert merge_headers(original, {}) is original
    assert merge_headers(None, {}) == []
    assert merge_headers([], {"a": None}) == [("a", None)]
    assert merge_headers((("a", b"1"),), {"b": b"2"}) == [("a", b"1"), ("b", b"2")]


def test_headers_must_be_a_list_or_tuple():
    with pytest.raises(ValueError, match="list or a tuple"):
        merge_headers({("a", b"1")}, {"b": b"2"})  # type: ignore[arg-type]
