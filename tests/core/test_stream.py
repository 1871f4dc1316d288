from __future__ import annotations

import pytest

from streamspark.core import Stream, compose
from streamspark.exceptions import InvalidTopology


def test_chain_and_leaf_collection():
    root = Stream()
    root.add_apply(lambda v: v + 1).add_filter(lambda v: v % 2 == 0).add_apply(lambda v: [v, v], expand=True)
    out = []
    push = compose(root, collect=lambda v, k, t, h: out.append(v))
    for i in range(4):
        push(i, None, 0, None)
    assert out == [2, 2, 4, 4]


def test_branches_copy_values_except_the_last():
    root = Stream()
    root.add_update(lambda v: v.append("a"))
    root.add_update(lambda v: v.append("b"))
    out = []
    original = []
    compose(root, collect=lambda v, k, t, h: out.append(v))(original, None, 0, None)
    assert out == [["a"], ["b"]]
    assert original == ["b"]  # the last branch works on the original object


def test_transform_changes_key_and_timestamp():
    root = Stream()
    root.add_transform(lambda v, k, t, h: (v, b"new", t + 1, h))
    out = []
    compose(root, collect=lambda *a: out.append(a))(1, b"old", 1, None)
    assert out == [(1, b"new", 2, None)]


def test_outputs_need_an_emitter():
    root = Stream()
    root.add_to_topic(object())
    with pytest.raises(InvalidTopology):
        compose(root)


def test_nodes_walks_the_whole_tree():
    root = Stream()
    a = root.add_apply(lambda v: v)
    a.add_filter(lambda v: v)
    root.add_update(lambda v: v)
    assert [n.kind for n in a.nodes()] == ["root", "apply", "filter", "update"]
