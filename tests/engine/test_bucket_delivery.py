"""Stateful micro-batches: a Spark task runs several state buckets one after another, and a
delivery that fails in its last bucket must still fail the whole micro-batch, with neither the
offsets nor any bucket's state committed (the buckets before it already reported success)."""

from __future__ import annotations

import base64
import json
import random
from collections import defaultdict

import pytest

from streamspark.engine.bucketing import bucket_of_key
from streamspark.exceptions import ProcessingError

BUCKETS = 16
KEYS = [f"k{i}" for i in range(40)]
#: the key of the highest bucket: the last group of its Spark task (groups run in bucket order)
POISON = max(KEYS, key=lambda k: bucket_of_key(k.encode(), BUCKETS))
#: incompressible (the producers compress with lz4) and above the small topic's limit
PAD = base64.b64encode(random.Random(11).randbytes(600)).decode()


def count(value, state):
    n = state.get("n", 0) + 1
    state.set("n", n)
    return {**value, "n": n}


def _small_topic(kafka) -> str:
    """A topic whose broker rejects record batches above 200 bytes: a real delivery failure."""
    from confluent_kafka.admin import NewTopic

    name = f"small-{kafka.new_topic()}"
    for fut in kafka.admin.create_topics([NewTopic(name, 1, 1, config={"max.message.bytes": "200"})]).values():
        fut.result(30)
    return name


def _app(make_app, src, out, poison_out, group, state_dir):
    app = make_app(consumer_group=group, state_dir=state_dir, state_buckets=BUCKETS)
    sdf = app.dataframe(app.topic(src, key_deserializer="str")).apply(count, stateful=True)
    sdf.filter(lambda v: v["k"] == POISON).to_topic(app.topic(poison_out, key_serializer="str"))
    sdf.filter(lambda v: v["k"] != POISON).to_topic(app.topic(out, key_serializer="str"))
    return app


@pytest.mark.parametrize("flush", ["one-flush-per-partition", "plain"])
def test_a_failed_delivery_in_the_last_bucket_of_a_task_fails_the_batch_and_commits_nothing(
    make_app, kafka, tmp_path, monkeypatch, flush
):
    """Under ``one-flush-per-partition`` the task's end bucket finds the failed delivery; on the
    plain path the poison bucket itself does."""
    from streamspark.engine import runner as runner_module
    from streamspark.engine.strategies import Strategies
    from streamspark.kafka.exceptions import KafkaProducerDeliveryError

    monkeypatch.setattr(
        runner_module.QueryRunner, "strategies", Strategies(plain={"one-flush-per-partition"} if flush == "plain" else ())
    )

    buckets = {bucket_of_key(k.encode(), BUCKETS) for k in KEYS}
    assert len(buckets) >= 8 and bucket_of_key(POISON.encode(), BUCKETS) == max(buckets)
    src, out = kafka.new_topic(), kafka.new_topic()
    records = [{"k": k, "i": i, **({"pad": PAD} if k == POISON else {})} for i in range(3) for k in KEYS]
    kafka.produce(src, [{"value": json.dumps(r).encode(), "key": r["k"].encode()} for r in records])
    group, state_dir = "bucket-delivery", str(tmp_path / "state")

    app = _app(make_app, src, out, _small_topic(kafka), group, state_dir)
    with pytest.raises(ProcessingError, match="Delivery of a message to topic") as info:
        app.run(count=len(records), timeout=90)
    assert info.value.stage == "producer"
    assert isinstance(info.value.__cause__, KafkaProducerDeliveryError)
    committed = kafka.committed(group, src)
    assert committed[0] < 0 or committed[0] == 0  # the batch's offsets were not committed

    # the same checkpoint, the poison key now deliverable: every record is read again, and every
    # bucket starts from the state before the failed batch (no bucket's update was committed)
    again = _app(make_app, src, out, out, group, state_dir)
    rows = again.run(count=len(records), timeout=90)
    counts = defaultdict(list)
    for row in rows:
        counts[row["k"]].append(row["n"])
    assert {k: sorted(ns) for k, ns in counts.items()} == {k: [1, 2, 3] for k in KEYS}
    assert kafka.committed(group, src)[0] == len(records)
