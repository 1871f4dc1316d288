"""With ``QueryRunner.first_batch_records_per_partition`` set (off by default), the query's first
micro-batch with data takes at most that many records of a partition for pipelines whose outputs
wait for the end of a batch (engine/runner.py, engine/_kafka_source.py); the batches after it
take ``max_records_per_partition``. Outputs and exactly-once are the same as with full batches."""

from __future__ import annotations

import json
from collections import defaultdict

import pytest

from streamspark.engine.runner import QueryRunner


def count(value: dict, state) -> dict:  # type: ignore[no-untyped-def]
    n = state.get("n", 0) + 1
    state.set("n", n)
    return {**value, "n": n}


def _readings(per_partition: int, partitions: int = 2) -> list[dict]:
    """Records ``{"i": i}`` spread over the partitions, keyed by three keys per partition."""
    return [
        {"value": json.dumps({"i": i}).encode(), "key": f"k{i % (3 * partitions)}".encode(), "partition": i % partitions}
        for i in range(per_partition * partitions)
    ]


def test_a_stateful_pipeline_s_first_batch_takes_its_own_cap_then_full_ones(make_app, kafka, monkeypatch):
    """``run(count=1)`` stops after the first committed micro-batch: the consumer group then
    holds its end offsets. The next run reads the rest, every record once, the counts going on."""
    monkeypatch.setattr(QueryRunner, "first_batch_records_per_partition", 4)
    src, out = kafka.new_topic(partitions=2), kafka.new_topic()
    kafka.produce(src, _readings(30))
    app = make_app(max_records_per_partition=20)
    app.dataframe(app.topic(src)).apply(count, stateful=True).to_topic(app.topic(out))
    assert len(app.run(count=1, timeout=30)) == 1
    group = app.config.consumer_group
    assert kafka.committed(group, src) == {0: 4, 1: 4}
    # a restarted query's first batch is small again (4 + 20 + 2 records of each partition)
    app.run(count=52, timeout=30, collect=False)
    assert kafka.committed(group, src) == {0: 30, 1: 30}
    outputs = [json.loads(m.value()) for m in kafka.consume(out, 60)]
    assert sorted(o["i"] for o in outputs) == list(range(60))
    assert sorted(o["n"] for o in outputs) == sorted(list(range(1, 11)) * 6)


@pytest.mark.parametrize("first, max_records", [(None, 20), (1_000, 5)])
def test_without_a_smaller_cap_the_first_batch_takes_max_records_per_partition(make_app, kafka, monkeypatch, first, max_records):
    """By default (None: not set), or with a first cap above ``max_records_per_partition``."""
    if first is not None:
        monkeypatch.setattr(QueryRunner, "first_batch_records_per_partition", first)
    src = kafka.new_topic(partitions=2)
    kafka.produce(src, _readings(30))
    app = make_app(max_records_per_partition=max_records)
    app.dataframe(app.topic(src)).apply(count, stateful=True)
    assert len(app.run(count=1, timeout=30)) == 1
    assert kafka.committed(app.config.consumer_group, src) == {0: max_records, 1: max_records}


def test_a_stateless_pipeline_to_a_topic_keeps_full_batches(make_app, kafka, monkeypatch):
    """Its tasks produce while they read: the first batch takes max_records_per_partition."""
    monkeypatch.setattr(QueryRunner, "first_batch_records_per_partition", 4)
    src, out = kafka.new_topic(partitions=2), kafka.new_topic()
    kafka.produce(src, _readings(30))
    app = make_app(max_records_per_partition=20)
    app.dataframe(app.topic(src)).to_topic(app.topic(out))
    assert app.run(count=1, timeout=30, collect=False) == []
    assert kafka.committed(app.config.consumer_group, src) == {0: 20, 1: 20}


@pytest.mark.parametrize("first", [0, 4])
def test_a_small_first_batch_gives_the_same_exactly_once_outputs(make_app, kafka, monkeypatch, first):
    """A running count per key under exactly-once: each record's output once, in key order,
    whether the first batch is small (4 records of a partition) or not (0: no own cap)."""
    monkeypatch.setattr(QueryRunner, "first_batch_records_per_partition", first)
    src, out = kafka.new_topic(partitions=2), kafka.new_topic()
    kafka.produce(src, _readings(30))
    app = make_app(max_records_per_partition=10, processing_guarantee="exactly-once")
    app.dataframe(app.topic(src)).apply(count, stateful=True).to_topic(app.topic(out))
    app.run(count=60, timeout=60, collect=False)
    messages = kafka.consume(out, 60, isolation="read_committed")
    assert len(messages) == 60
    by_key: dict[bytes, list[int]] = defaultdict(list)
    for m in sorted(messages, key=lambda m: json.loads(m.value())["i"]):
        by_key[m.key()].append(json.loads(m.value())["n"])
    assert dict(by_key) == {f"k{k}".encode(): list(range(1, 11)) for k in range(6)}
