from __future__ import annotations

import pytest

from streamspark.core import Stream, compose
from streamspark.core.stream import InvalidOperation
from streamspark.core.stream.nodes import ApplyNode
from streamspark.exceptions import InvalidTopology


def test_chain_and_leaf_collection():
    root = Stream()
    root.add_apply(lambda v: v + 1).add_filter(lambda v: v % 2 == 0).add_apply(lambda v: [v, v], expand=True)
    out = []
    push = compose(root, collect=lambda v, k, t, h: out.append(v))
    for i in range(4):
        push(i, None, 0, None)
    assert out == [2, 2, 4, 4]


def test_branches_copy_values_except_the_first():
    root = Stream()
    root.add_update(lambda v: v.append("a"))
    root.add_update(lambda v: v.append("b"))
    out = []
    original = []
    compose(root, collect=lambda v, k, t, h: out.append(v))(original, None, 0, None)
    assert out == [["a"], ["b"]]
    assert original == ["a"]  # the first branch works on the original object (as Quix Streams 3.28.1)


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


def test_constructor_starts_a_tree_or_adds_an_apply_step():
    root = Stream()
    step = Stream(lambda v: v * 2, parents=[root])
    identity = Stream(parents=[step])
    assert step.root_path() == [step, root] and identity.root_path()[1] == step
    assert identity.compose_returning()(3, None, 0, None) == (6, None, 0, None)
    with pytest.raises(InvalidOperation):
        Stream(parents=[root, step])


def test_handles_on_one_node_are_equal_and_hash_alike():
    root = Stream()
    a = root.add_apply(lambda v: v)
    assert a.root_path()[0] == a and hash(a.root_path()[0]) == hash(a) and a != root
    assert root.full_tree() == [root, a]


@pytest.mark.parametrize(
    "build, flag, message",
    [
        (lambda r: r.add_filter(bool), "allow_filters", "Filter functions are not allowed"),
        (lambda r: r.add_update(print), "allow_updates", "Update functions are not allowed"),
        (lambda r: r.add_transform(lambda *a: a), "allow_transforms", "Transform functions are not allowed"),
        (lambda r: r.add_apply(list, expand=True), "allow_expands", "Expand functions are not allowed"),
    ],
)
def test_compose_flags_refuse_steps(build, flag, message):
    root = Stream()
    build(root)
    with pytest.raises(ValueError, match=message):
        root.compose(**{flag: False})
    out = []
    root.compose_single(sink=lambda *a: out.append(a))([1], None, 0, None)
    assert out


def test_compose_returns_the_root_push():
    root = Stream()
    root.add_apply(lambda v: v + 1)
    out = []
    [(handle, push)] = root.compose(sink=lambda v, k, t, h: out.append(v)).items()
    push(1, None, 0, None)
    assert handle == root and out == [2]


@pytest.mark.parametrize(
    "build, message",
    [
        (lambda r: r.add_filter(bool), "Filter"),
        (lambda r: r.add_apply(list, expand=True), "Expand"),
        (lambda r: r.add_apply(str).add_update(print), "Update"),
    ],
)
def test_compose_returning_takes_apply_steps_only(build, message):
    with pytest.raises(ValueError, match=message):
        build(Stream()).compose_returning()


def test_compose_returning_of_a_stateful_step_needs_a_state_provider():
    step = Stream().add(ApplyNode(lambda v, state: v, stream_id="s"))
    with pytest.raises(InvalidTopology, match="state provider"):
        step.compose_returning()


def test_diff_detaches_a_copy_of_the_chain():
    root = Stream()
    first = root.add_apply(lambda v: v + 1)
    last = first.add_apply(lambda v: v * 10)
    chain = root.diff(last)
    assert root.node.children == [] and first.node.parent is None and first.node.pruned
    assert chain.compose_returning()(1, b"k", 2, None) == (20, b"k", 2, None)
    last.add_apply(lambda v: -v)  # the original chain can grow: the copy does not
    assert chain.compose_returning()(1, b"k", 2, None) == (20, b"k", 2, None)
    with pytest.raises(InvalidOperation, match="more than once"):
        root.diff(last)


def test_returning_steps_filter_and_update_with_the_chain_result():
    root = Stream()
    flt = root.add_returning("filter", root.diff(root.add_apply(lambda v: v["n"] > 1)))
    flt.add_returning("update", flt.diff(flt.add_apply(lambda v: v["n"] * 2)), lambda v, r: v.update(d=r))
    out = []
    push = compose(root, collect=lambda v, k, t, h: out.append(v))
    push({"n": 1}, None, 0, None)
    push({"n": 2}, None, 0, None)
    assert out == [{"n": 2, "d": 4}]
    with pytest.raises(ValueError):
        root.add_returning("apply", Stream())


def test_a_returning_step_with_a_stateful_chain_is_marked_stateful_and_pickles():
    from pyspark import cloudpickle  # how the plan reaches Spark's workers

    from streamspark.state.store import KeyedStateStore

    def count(value, state):
        n = state.get("n", 0) + 1
        state.set("n", n)
        return n

    root = Stream()
    step = root.add_returning("update", root.diff(root.add(ApplyNode(count, stream_id="s"))), lambda v, r: v.update(n=r))
    assert step.node.stream_id == "s"
    copy = cloudpickle.loads(cloudpickle.dumps(root.node))
    out = []
    push = compose(copy, collect=lambda v, k, t, h: out.append(v), states=KeyedStateStore())
    for key in (b"a", b"a", b"b"):
        push({}, key, 0, None)
    assert out == [{"n": 1}, {"n": 2}, {"n": 1}]
