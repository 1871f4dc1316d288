"""Benchmarks: streamspark vs a bare confluent-kafka loop on the embedded broker.

Usage: ``.venv/bin/python bench/run.py [--messages N] [--json out.json]``

Workload W1 (stateless): filter + column arithmetic + apply → to_topic, ~150-byte JSON
values over 4 partitions. Spark start-up is excluded (the session is created first);
the first micro-batch's Python worker start-up is included. Quix Streams comparison
comes with the benchmark issue.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import sys
import time
import uuid

from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic


def make_topic(address: str, partitions: int = 4) -> str:
    name = f"bench-{uuid.uuid4().hex[:8]}"
    admin = AdminClient({"bootstrap.servers": address})
    for f in admin.create_topics([NewTopic(name, partitions, 1)]).values():
        f.result(30)
    time.sleep(0.5)
    return name


def load(address: str, topic: str, n: int) -> None:
    p = Producer({"bootstrap.servers": address, "linger.ms": 50, "batch.num.messages": 10000})
    rnd = random.Random(1)
    for i in range(n):
        v = {"id": i, "sensor": f"sensor-{i % 1000:04d}", "temp": round(rnd.uniform(0, 50), 3),
             "hum": round(rnd.uniform(0, 100), 3), "site": "plant-north-7", "ts": 1_700_000_000_000 + i}
        while True:
            try:
                p.produce(topic, key=v["sensor"].encode(), value=json.dumps(v).encode(), partition=i % 4)
                break
            except BufferError:
                p.poll(0.1)
    p.flush()


def count(address: str, topic: str) -> int:
    c = Consumer({"bootstrap.servers": address, "group.id": "bench-count"})
    md = c.list_topics(topic, timeout=10).topics[topic]
    total = sum(c.get_watermark_offsets(TopicPartition(topic, p), timeout=10)[1] for p in md.partitions)
    c.close()
    return total


def transform(v: dict) -> dict:
    return {**v, "tag": "hot"}


def bare_loop(address: str, src: str, out: str, n: int) -> float:
    import orjson

    c = Consumer({"bootstrap.servers": address, "group.id": f"bare-{uuid.uuid4().hex[:6]}", "auto.offset.reset": "earliest", "enable.auto.commit": False})
    p = Producer({"bootstrap.servers": address, "linger.ms": 20})
    c.subscribe([src])
    seen = 0
    started = time.perf_counter()
    while seen < n:
        for m in c.consume(10000, timeout=1.0):
            if m.error():
                continue
            seen += 1
            v = orjson.loads(m.value())
            if v["temp"] > 25:
                v["temp_f"] = v["temp"] * 9 / 5 + 32
                v = transform(v)
                while True:
                    try:
                        p.produce(out, key=m.key(), value=orjson.dumps(v))
                        break
                    except BufferError:
                        p.poll(0.1)
        p.poll(0)
    p.flush()
    c.commit(asynchronous=False)
    elapsed = time.perf_counter() - started
    c.close()
    return elapsed


def streamspark_w1(address: str, src: str, out: str, n: int, state_dir: str) -> float:
    from streamspark import Application

    app = Application(broker_address=address, consumer_group=f"ss-{uuid.uuid4().hex[:6]}", auto_offset_reset="earliest",
                      state_dir=state_dir, loglevel="INFO", max_records_per_partition=250_000)
    sdf = app.dataframe(app.topic(src))
    sdf = sdf[sdf["temp"] > 25]
    sdf["temp_f"] = sdf["temp"] * 9 / 5 + 32
    sdf = sdf.apply(transform)
    sdf.to_topic(app.topic(out))
    started = time.perf_counter()
    app.run(timeout=2.0, collect=False)
    return time.perf_counter() - started - 2.0


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--messages", type=int, default=200_000)
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    import tempfile

    from streamspark.engine.session import get_spark
    from streamspark.testing import EmbeddedBroker

    results = []
    with EmbeddedBroker() as broker:
        src = make_topic(broker.address)
        t = time.perf_counter()
        load(broker.address, src, args.messages)
        print(f"loaded {args.messages} messages in {time.perf_counter() - t:.1f}s", flush=True)
        out_bare = make_topic(broker.address)
        el = bare_loop(broker.address, src, out_bare, args.messages)
        results.append({"workload": "W1", "system": "confluent-kafka loop", "seconds": el, "msg_per_s": args.messages / el})
        get_spark()
        out_ss = make_topic(broker.address)
        el = streamspark_w1(broker.address, src, out_ss, args.messages, tempfile.mkdtemp())
        results.append({"workload": "W1", "system": "streamspark", "seconds": el, "msg_per_s": args.messages / el,
                        "outputs": count(broker.address, out_ss), "expected_outputs": count(broker.address, out_bare)})
        from pyspark.sql import SparkSession

        SparkSession.getActiveSession().stop()
    limit = results[0]["msg_per_s"]
    print(f"{'workload':8} {'system':22} {'msg/s':>10} {'vs limit':>9}")
    for r in results:
        r["ratio_to_limit"] = r["msg_per_s"] / limit
        r["peak_rss_mb_driver"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(f"{r['workload']:8} {r['system']:22} {r['msg_per_s']:10.0f} {r['ratio_to_limit']:9.2f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
