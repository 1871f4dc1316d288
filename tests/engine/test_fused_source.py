"""Stateless pipelines run inside the Kafka source's read() (the fused path, used automatically);
the plain path (source rows → mapInArrow) must give the same results on the same input."""

from __future__ import annotations

import json

import pytest

from streamspark.engine import runner as runner_module
from streamspark.engine.strategies import Strategies
from streamspark.exceptions import ProcessingError


def _pipeline(app, src, out, sink_path):
    from streamspark.sinks import CSVSink

    sdf = app.dataframe(app.topic(src, key_deserializer="str"))
    sdf = sdf[sdf["v"] % 3 != 0]
    sdf["double"] = sdf["v"] * 2
    sdf = sdf.apply(lambda v: [v, {**v, "copy": True}] if v["v"] % 5 == 0 else [v], expand=True)
    sdf = sdf.set_headers(lambda v, k, t, h: [("parity", str(v["v"] % 2).encode())])
    sdf.sink(CSVSink(sink_path))
    sdf.to_topic(app.topic(out, key_serializer="str"))
    return sdf


def _messages(kafka, topic, n):
    msgs = kafka.consume(topic, expected=n)
    return sorted(
        (m.key(), json.dumps(json.loads(m.value()), sort_keys=True), m.timestamp()[1], tuple(m.headers() or ())) for m in msgs
    )


def test_fused_and_plain_paths_give_the_same_outputs(make_app, kafka, tmp_path, monkeypatch):
    src = kafka.new_topic(partitions=3)
    kafka.produce(
        src,
        [
            {
                "value": json.dumps({"v": i}).encode(),
                "key": f"k{i % 7}".encode(),
                "partition": i % 3,
                "timestamp": 1_000 + i,
                "headers": [("in", b"x")],
            }
            for i in range(300)
        ],
    )
    expected_count = sum((2 if i % 5 == 0 else 1) for i in range(300) if i % 3 != 0)
    used = []
    real = runner_module.query_source
    monkeypatch.setattr(
        runner_module, "query_source", lambda config, plan=None: (plan is not None and used.append(plan)) or real(config, plan)
    )

    results = {}
    for fused in (True, False):
        monkeypatch.setattr(runner_module.QueryRunner, "strategies", Strategies(plain=() if fused else {"fused-source"}))
        out = kafka.new_topic()
        app = make_app(state_dir=str(tmp_path / f"state-{fused}"))
        _pipeline(app, src, out, str(tmp_path / f"sink-{fused}.csv"))
        collected = app.run(count=expected_count * 2, timeout=60, metadata=True)
        results[fused] = (
            _messages(kafka, out, expected_count),
            sorted(open(tmp_path / f"sink-{fused}.csv").read().splitlines()),
            sorted((r["_key"], r["_offset"], json.dumps(r, sort_keys=True, default=str)) for r in collected),
        )
    assert len(used) == 1, "the stateless pipeline ran fused exactly when the fused-source strategy was enabled"
    assert len(results[True][0]) == expected_count
    assert results[True] == results[False]


def test_fused_path_reports_errors_like_the_plain_path(make_app, kafka, tmp_path):
    src = kafka.new_topic()
    kafka.produce(src, [{"value": b'{"v": 1}'}, {"value": b"not json"}])
    app = make_app()
    app.dataframe(app.topic(src)).apply(lambda v: v)
    with pytest.raises(ProcessingError, match="offset=1"):
        app.run(count=2, timeout=60)


def test_fused_path_under_exactly_once(make_app, kafka):
    """The fused task opens its Kafka transaction like the plain one (batch id and slot from the task)."""
    src, out = kafka.new_topic(partitions=2), kafka.new_topic()
    kafka.produce(src, [{"value": json.dumps({"v": i}).encode(), "partition": i % 2} for i in range(50)])
    app = make_app(processing_guarantee="exactly-once")
    app.dataframe(app.topic(src)).apply(lambda v: {"w": v["v"] * 10}).to_topic(app.topic(out))
    app.run(count=50, timeout=60)
    committed = kafka.consume(out, expected=50, isolation="read_committed")
    assert sorted(json.loads(m.value())["w"] for m in committed) == [i * 10 for i in range(50)]
