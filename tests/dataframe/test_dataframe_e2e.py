"""The remaining dataframe operations end to end on the broker and Spark, in one pipeline."""

from __future__ import annotations

import json

from ..conftest import json_messages


def test_every_stateless_operation_end_to_end(make_app, kafka):
    src, out = kafka.new_topic(), kafka.new_topic()
    kafka.produce(src, json_messages([{"a": i, "b": None if i % 2 else i * 10, "junk": 1, "s": f"x{i}"} for i in range(6)],
                                     key=lambda v: f"k{v['a']}".encode()))
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
        expected.append({"a": i, "b": b, "c": "filled", "has_ab": True, "calc": ((i + 1) * 2 - 1) // 3 % 5,
                         "flags": i in (1, 2) or "5" in f"x{i}", "neg": i * i / 2, "null": True, "key": f"k{i}", "ts_ok": True})
    assert rows == expected
    assert [json.loads(m.value()) for m in kafka.consume(out, expected=4)] == expected
