"""The remaining dataframe operations end to end on the broker and Spark, in one pipeline."""

from __future__ import annotations

import json

from ..conftest import json_messages


def test_every_stateless_operation_end_to_end(make_app, kafka):
    src, out = kafka.new_topic(), kafka.new_topic()
    kafka.produce(
        src,
        json_messages(
            [{"a": i, "b": None if i % 2 else i * 10, "junk": 1, "s": f"x{i}"} for i in range(6)],
            key=lambda v: f"k{v['a']}".encode(),
        ),
    )
    app = make_app()
    sdf = app.dataframe(app.topic(src))
    sdf.drop("junk")
    sdf.fill(b=-1, c="filled")
    sdf["has_ab"] = sdf.contains(["a", "b"])
    sdf["calc"] = ((sdf["a"] + 1) * 2 - 1) // 3 % 5
    sdf["flags"] = sdf["a"].isin([1, 2]) | sdf["s"].contains("5")
    sdf["neg"] = (-sdf["a"]).abs() ** 2 / 2
    sdf["null"] = sdf["b"].notnull()
    sdf.update(lambda v, k, t, h: v.__setitem__("key", k.decode()), metadata=True)
    sdf = sdf[(sdf["a"] >= 1) & ~(sdf["a"] == 4)]
    sdf = sdf[["a", "b", "c", "has_ab", "calc", "flags", "neg", "null", "key"]]
    sdf = sdf.apply(lambda v, k, t, h: {**v, "ts_ok": t > 0}, metadata=True)
    sdf.print(pretty=False)  # prints in the Spark workers (their stdout is the JVM's); must not disturb the flow
    sdf.to_topic(app.topic(out))
    rows = app.run(count=4, timeout=60)

    expected = []
    for i in (1, 2, 3, 5):
        b = -1 if i % 2 else i * 10
        expected.append(
            {
                "a": i,
                "b": b,
                "c": "filled",
                "has_ab": True,
                "calc": ((i + 1) * 2 - 1) // 3 % 5,
                "flags": i in (1, 2) or "5" in f"x{i}",
                "neg": i * i / 2,
                "null": True,
                "key": f"k{i}",
                "ts_ok": True,
            }
        )
    assert rows == expected
    assert [json.loads(m.value()) for m in kafka.consume(out, expected=4)] == expected


def count_per_key(value, state):
    n = state.get("n", 0) + 1
    state.set("n", n)
    return n


def test_dataframes_as_filter_and_column_source_end_to_end(make_app, kafka):
    """``sdf[sdf.apply(f)]`` and ``sdf["x"] = sdf.apply(g)`` (one of them stateful) compile for Spark
    from the same plan as ``sdf.test()``; ``|`` does not evaluate its right side when the left decides."""
    src, out = kafka.new_topic(), kafka.new_topic()
    records = [{"a": i, "b": None if i % 3 == 0 else i} for i in range(8)]
    kafka.produce(src, json_messages(records, key=lambda v: f"k{v['a'] % 2}".encode()))
    app = make_app()
    sdf = app.dataframe(app.topic(src))
    sdf = sdf[sdf.apply(lambda v: v["a"] % 4 != 1)]
    sdf["double"] = sdf.apply(lambda v: v["a"] * 2)
    sdf["seen"] = sdf.apply(count_per_key, stateful=True)
    sdf["big"] = sdf["b"].isnull() | (sdf["b"] > 3)  # `None > 3` would raise
    sdf.to_topic(app.topic(out))

    kept = [r for r in records if r["a"] % 4 != 1]
    seen: dict[int, int] = {}
    expected = []
    for r in kept:
        seen[r["a"] % 2] = seen.get(r["a"] % 2, 0) + 1
        expected.append({**r, "double": r["a"] * 2, "seen": seen[r["a"] % 2], "big": r["b"] is None or r["b"] > 3})
    rows = app.run(count=len(kept), timeout=60)
    assert sorted(rows, key=lambda v: v["a"]) == expected
    assert sorted((json.loads(m.value()) for m in kafka.consume(out, expected=len(kept))), key=lambda v: v["a"]) == expected


def test_two_group_bys_branching_from_one_dataframe_end_to_end(make_app, kafka):
    """As in the reference, one stream may be re-keyed twice under different names; each branch
    counts per its own new key."""
    src = kafka.new_topic(partitions=2)
    msgs = [
        {"value": json.dumps({"store": f"s{i % 2}", "customer": f"c{i % 3}"}).encode(), "key": b"k", "partition": i % 2}
        for i in range(12)
    ]
    kafka.produce(src, msgs)
    app = make_app(state_buckets=2)
    sdf = app.dataframe(app.topic(src))
    by_store = sdf.group_by("store").apply(lambda v, state: {"by": "store", "n": count_per_key(v, state)}, stateful=True)
    by_customer = sdf.group_by(lambda v: v["customer"], name="cust").apply(
        lambda v, state: {"by": "customer", "n": count_per_key(v, state)}, stateful=True
    )
    rows = app.run(count=24, timeout=60, metadata=True)
    assert len(rows) == 24
    counts: dict[tuple[str, str], int] = {}
    for r in rows:
        counts[(r["by"], r["_key"])] = max(counts.get((r["by"], r["_key"]), 0), r["n"])
    assert counts == {("store", "s0"): 6, ("store", "s1"): 6, ("customer", "c0"): 4, ("customer", "c1"): 4, ("customer", "c2"): 4}
