"""``concat`` on the broker and Spark: branches of one topic, and topics merged before a stateful step."""

from __future__ import annotations

from ..conftest import json_messages


def test_concat_of_branches_and_of_topics_end_to_end(make_app, kafka):
    a, b = kafka.new_topic(), kafka.new_topic()
    kafka.produce(a, json_messages([{"n": n} for n in (1, 5, 50)], key=lambda v: b"k"))
    kafka.produce(b, json_messages([{"alert": "hot"}], key=lambda v: b"k"))
    app = make_app()
    sdf_a, sdf_b = app.dataframe(app.topic(a)), app.dataframe(app.topic(b))
    small = sdf_a[sdf_a["n"] < 10].apply(lambda v: {**v, "side": "small"})
    big = sdf_a[sdf_a["n"] >= 5].apply(lambda v: {**v, "side": "big"})
    merged = small.concat(big).concat(sdf_b.apply(lambda v: {**v, "side": "alert"}))
    merged["tagged"] = merged["side"].apply(str.upper)
    rows = app.run(count=5, timeout=60)
    assert sorted(rows, key=lambda v: (v.get("n", 0), v["side"])) == [
        {"alert": "hot", "side": "alert", "tagged": "ALERT"},
        {"n": 1, "side": "small", "tagged": "SMALL"},
        {"n": 5, "side": "big", "tagged": "BIG"},
        {"n": 5, "side": "small", "tagged": "SMALL"},
        {"n": 50, "side": "big", "tagged": "BIG"},
    ]


def count(value, state):
    state.set("n", state.get("n", 0) + 1)
    return {**value, "count": state.get("n")}


def test_a_stateful_step_after_a_concat_of_topics_counts_both_end_to_end(make_app, kafka):
    a, b = kafka.new_topic(), kafka.new_topic()
    kafka.produce(a, json_messages([{"src": "a", "i": i} for i in range(3)], key=lambda v: f"k{v['i'] % 2}".encode()))
    kafka.produce(b, json_messages([{"src": "b", "i": i} for i in range(3)], key=lambda v: f"k{v['i'] % 2}".encode()))
    app = make_app()
    app.dataframe(app.topic(a)).concat(app.dataframe(app.topic(b))).apply(count, stateful=True)
    rows = app.run(count=6, timeout=60)
    finals = {}
    for row in rows:
        key = f"k{row['i'] % 2}"
        finals[key] = max(finals.get(key, 0), row["count"])
    assert finals == {"k0": 4, "k1": 2}
    assert sorted(row["count"] for row in rows if row["i"] % 2 == 0) == [1, 2, 3, 4]
