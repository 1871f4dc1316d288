"""Two ways of feeding files to a pipeline on Spark, measured on the same JSON-lines files.

- ``source``: the reference's model, which streamspark follows. ``LocalFileSource`` produces the
  files' records into its topic from a process of its own, and the streaming query reads that
  topic like any other (replay, offsets and exactly-once unchanged). Measured: ``app.run()``
  with ``apply`` → ``to_topic``, from the call until every output is in the output topic.
- ``direct``: Spark reads the files itself (``spark.read.text`` over the folder, one task per
  file split), and a ``mapInArrow`` step decodes each line, runs the same ``apply`` and produces
  to the output topic. No source topic, no offsets: a crash re-reads every file.

Usage: ``.venv/bin/python bench/file_feed.py [--records 500000] [--files 8]``; prints one JSON
line per path. The Spark session is created (and its Python workers started) before both
measurements.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any, Iterator

from confluent_kafka import Consumer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic


def write_files(folder: Path, records: int, files: int) -> None:
    """``files`` JSON-lines files in the ``FileSink`` layout (``_key``, ``_value``, ``_timestamp``)."""
    rng = random.Random(7)
    per_file = records // files
    t0 = int(time.time() * 1000) - records
    n = 0
    for f in range(files):
        with open(folder / f"part-{f:04d}.jsonl", "w") as out:
            for _ in range(per_file):
                sensor = f"sensor-{rng.randrange(10_000)}"
                value = {
                    "sensor": sensor,
                    "ts": t0 + n,
                    "temp": round(rng.uniform(-10, 40), 2),
                    "hum": round(rng.uniform(0, 100), 1),
                    "site": "plant-a",
                }
                out.write(json.dumps({"_key": sensor, "_value": value, "_timestamp": t0 + n}) + "\n")
                n += 1


def count_outputs(address: str, topic: str) -> int:
    consumer = Consumer({"bootstrap.servers": address, "group.id": f"count-{uuid.uuid4().hex[:6]}"})
    total = 0
    for partition in consumer.list_topics(topic, timeout=10).topics[topic].partitions:
        low, high = consumer.get_watermark_offsets(TopicPartition(topic, partition), timeout=10)
        total += high - low
    consumer.close()
    return total


def add_temp_f(value: dict) -> dict:
    value["temp_f"] = value["temp"] * 9 / 5 + 32
    return value


def via_source(address: str, folder: Path, records: int, state_dir: str) -> dict[str, Any]:
    from streamspark import Application
    from streamspark.sources.community.file import LocalFileSource

    app = Application(
        broker_address=address, consumer_group=f"feed-{uuid.uuid4().hex[:6]}", auto_offset_reset="earliest", state_dir=state_dir
    )
    out = app.topic(f"feed-source-out-{uuid.uuid4().hex[:6]}")
    source = LocalFileSource(folder, replay_speed=0, name=f"feed-{uuid.uuid4().hex[:6]}")
    app.dataframe(source=source).apply(add_temp_f).to_topic(out)
    started = time.monotonic()
    app.run(count=records, timeout=600)
    elapsed = time.monotonic() - started
    return {
        "path": "source",
        "records": count_outputs(address, out.name),
        "seconds": round(elapsed, 2),
        "records_per_s": round(records / elapsed),
    }


def via_direct(address: str, folder: Path, records: int, spark: Any) -> dict[str, Any]:
    out = f"feed-direct-out-{uuid.uuid4().hex[:6]}"
    admin = AdminClient({"bootstrap.servers": address})  # kept alive until the topic exists
    admin.create_topics([NewTopic(out, 1, 1)])[out].result(30)

    def produce(batches: Iterator[Any]) -> Iterator[Any]:
        import orjson
        import pyarrow as pa
        from confluent_kafka import Producer

        producer = Producer({"bootstrap.servers": address, "linger.ms": 50, "queue.buffering.max.messages": 1_000_000})
        n = 0
        for batch in batches:
            for line in batch.column(0).to_pylist():
                record = orjson.loads(line)
                value = add_temp_f(record["_value"])
                while True:
                    try:
                        producer.produce(
                            out, key=record["_key"].encode(), value=orjson.dumps(value), timestamp=record["_timestamp"]
                        )
                        break
                    except BufferError:
                        producer.poll(0.05)
                n += 1
            producer.poll(0)
        producer.flush(120)
        yield pa.RecordBatch.from_pylist([{"n": n}])

    started = time.monotonic()
    produced = spark.read.text(str(folder)).mapInArrow(produce, "n long").groupBy().sum("n").collect()[0][0]
    elapsed = time.monotonic() - started
    return {
        "path": "direct",
        "records": produced,
        "in_topic": count_outputs(address, out),
        "seconds": round(elapsed, 2),
        "records_per_s": round(records / elapsed),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=500_000)
    parser.add_argument("--files", type=int, default=8)
    args = parser.parse_args()

    from streamspark.engine.session import get_spark, wait_warmup
    from streamspark.testing import EmbeddedBroker

    with EmbeddedBroker(nice=10) as broker, tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "files"
        folder.mkdir()
        write_files(folder, args.records, args.files)
        spark = get_spark()
        wait_warmup(120)
        for row in (
            via_direct(broker.address, folder, args.records, spark),
            via_source(broker.address, folder, args.records, str(Path(tmp) / "state")),
        ):
            print(json.dumps(row), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
