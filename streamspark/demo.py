"""The demo pipeline on embedded defaults: ``python -m streamspark.demo``.

It starts an embedded Kafka-protocol broker on 127.0.0.1, produces synthetic sensor
readings, runs a streamspark pipeline on local Spark (filter, column arithmetic, apply,
an output topic and a CSV file sink), prints progress while it runs and what it produced,
then stops the broker.
"""

from __future__ import annotations

import argparse
import csv
import json
import random
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Optional

__all__ = ("main",)


def _produce_readings(address: str, topic: str, total: int, sensors: int, seconds: float) -> None:
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": address, "linger.ms": 20})
    rnd = random.Random(7)
    pause = seconds / max(total, 1)
    for i in range(total):
        sensor = f"sensor-{i % sensors}"
        reading = {"sensor": sensor, "temp": round(rnd.gauss(28, 5), 2), "seq": i, "ts_ms": int(time.time() * 1000)}
        producer.produce(topic, key=sensor.encode(), value=json.dumps(reading).encode())
        if i % 500 == 499:
            producer.flush()
            print(f"  [producer] {i + 1}/{total} readings sent", flush=True)
        if pause:
            time.sleep(pause)
    producer.flush()
    print(f"  [producer] done: {total} readings", flush=True)


def _stop_spark() -> None:
    from pyspark.sql import SparkSession

    session = SparkSession.getActiveSession()
    if session is not None:
        session.stop()


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(description="streamspark demo: embedded broker + local Spark + local files")
    parser.add_argument("--messages", type=int, default=3000, help="readings to produce (default 3000)")
    parser.add_argument("--sensors", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=8.0, help="spread production over this many seconds")
    parser.add_argument("--output-dir", default="demo-output", help="where the CSV sink writes (default ./demo-output)")
    args = parser.parse_args(argv)

    from streamspark import Application, TopicConfig
    from streamspark.sinks import CSVSink
    from streamspark.testing import EmbeddedBroker

    out_dir = Path(args.output_dir).absolute()
    out_dir.mkdir(parents=True, exist_ok=True)
    csv_path = out_dir / "hot_readings.csv"
    csv_path.unlink(missing_ok=True)
    state_dir = tempfile.mkdtemp(prefix="streamspark-demo-state-")

    print("streamspark demo: starting the embedded broker", flush=True)
    with EmbeddedBroker() as broker:
        print(f"  broker on {broker.address}", flush=True)
        app = Application(
            broker_address=broker.address,
            consumer_group="streamspark-demo",
            auto_offset_reset="earliest",
            state_dir=state_dir,
            commit_interval=1.0,
        )
        readings = app.topic("sensor-readings", config=TopicConfig(num_partitions=4, replication_factor=1))
        hot = app.topic("hot-readings", key_serializer="str")

        sdf = app.dataframe(readings)
        sdf = sdf[sdf["temp"] > 30]
        sdf["temp_f"] = sdf["temp"] * 9 / 5 + 32
        sdf = sdf.apply(lambda v: {**v, "level": "very hot" if v["temp"] > 35 else "hot"})
        sdf.to_topic(hot, key=lambda v: v["sensor"])
        sdf.sink(CSVSink(str(csv_path)))

        app.topic_manager.ensure_topics()
        producer = threading.Thread(
            target=_produce_readings,
            args=(broker.address, readings.name, args.messages, args.sensors, args.seconds),
            daemon=True,
        )
        producer.start()
        print("streamspark demo: running the pipeline on local Spark (stops after 10 s without new data)", flush=True)
        started = time.monotonic()
        rows = app.run(timeout=10, metadata=True)
        elapsed = time.monotonic() - started
        producer.join()

        print(f"\nstreamspark demo: {len(rows)} hot readings in {elapsed:.1f}s", flush=True)
        per_sensor = Counter(r["sensor"] for r in rows)
        for sensor, n in sorted(per_sensor.items()):
            print(f"  {sensor}: {n}")
        for r in rows[:3]:
            print("  e.g.", {k: r[k] for k in ("sensor", "temp", "temp_f", "level", "_partition", "_offset")})
        lines: list[dict[str, str]] = []
        if csv_path.exists():
            with open(csv_path, newline="") as f:
                lines = list(csv.DictReader(f))
        print(f"  CSV sink: {csv_path} ({len(lines)} rows)")
        print(f"  output topic '{hot.name}' received them keyed by sensor")
        ok = len(lines) == len(rows) and len(rows) > 0
        _stop_spark()  # before the broker goes away, so no Spark worker keeps polling it
    print("streamspark demo: broker stopped", flush=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
