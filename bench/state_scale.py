"""W8: what a small stateful micro-batch costs as the state grows.

Usage: ``.venv/bin/python bench/state_scale.py [--keys 10000,1000000] [--rounds 6] [--state-buckets 64] [--json out.json]``

For each state size K: a fresh application (W2's running count per key → a topic) reads a
backlog of K records, one per key, which builds a state of K keys; then, ``--rounds`` times,
the same 20,000 records (keys of the first 10,000 of those K, the same records for every K) are
produced at once and the micro-batches that read them are timed (the median of the rounds after
the first) with Spark's progress reports
(``triggerExecution``, the whole micro-batch, and ``addBatch``, its Spark job; summed when a round
runs as more than one micro-batch, which ``batches_per_round`` reports). The target of
issue "speed as a user sees it": at 10M keys such a micro-batch costs at most twice what it
costs at 10k keys.

Each row: ``{"workload": "W8", "keys": K, "build_s": ..., "batch_ms": [...], "median_batch_ms": ...,
"median_add_batch_ms": ...}``; the last row holds ``ratio`` (the median at the largest K over the
median at the smallest). The embedded broker and one Spark session serve every size (the session
is started, and its Python processes warmed, before the first one).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path
from typing import Any, Callable, Optional

from confluent_kafka import Producer

sys.path.insert(0, str(Path(__file__).parent))
from run import BIG_FETCH, count_and_delete, make_topic  # noqa: E402

#: records of one timed micro-batch, and the keys they use
BATCH, BATCH_KEYS = 20_000, 10_000


def count_state(value: dict, state: Any) -> dict:
    """W2's step (defined here: Spark's workers get this script's functions by value)."""
    n = state.get("n", 0) + 1
    state.set("n", n)
    return {**value, "n": n}


def key_of(i: int) -> bytes:
    return b"key-%08d" % i


def produce(address: str, topic: str, n: int, key_count: int) -> None:
    """``n`` small JSON records, record ``i`` keyed by key ``i % key_count`` (partition ``i % 4``),
    flushed. A long linger sends each partition's records of a timed round in one request, so
    that they become visible together (a micro-batch starts as soon as records are there)."""
    p = Producer({"bootstrap.servers": address, "linger.ms": 500, "batch.num.messages": 100_000})
    for i in range(n):
        while True:
            try:
                p.produce(topic, key=key_of(i % key_count), value=b'{"v": %d}' % i, partition=i % 4)
                break
            except BufferError:
                p.poll(0.1)
    p.flush()


def progress_after(spark: Any, batch_id: int) -> list[dict]:
    """The progress reports Spark still holds of the micro-batches after ``batch_id``."""
    queries = spark.streams.active
    rows = [json.loads(p.json) for p in queries[0].recentProgress] if queries else []
    return [row for row in rows if row["batchId"] > batch_id]


def run_size(address: str, keys: int, rounds: int, state_root: str, state_buckets: Optional[int] = None) -> dict:
    from pyspark.sql import SparkSession

    from streamspark import Application

    src, out = make_topic(address), make_topic(address)
    produce(address, src, keys, keys)
    app = Application(
        broker_address=address,
        consumer_group=f"w8-{uuid.uuid4().hex[:6]}",
        auto_offset_reset="earliest",
        state_dir=f"{state_root}/{keys}",
        loglevel="WARNING",
        consumer_extra_config=BIG_FETCH,
        state_buckets=state_buckets,
    )
    app.dataframe(app.topic(src)).apply(count_state, stateful=True).to_topic(app.topic(out))
    runner = threading.Thread(target=app.run)
    started = time.perf_counter()
    runner.start()

    def wait_for(done: Callable[[], bool], what: str, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while not done():
            if time.monotonic() > deadline or not runner.is_alive():
                app.stop()
                raise RuntimeError(f"W8 at {keys} keys: no {what} (status {app.status()})")
            time.sleep(0.05)

    wait_for(lambda: app.status().get("inputs", 0) >= keys, "state built", timeout=3600)
    build = time.perf_counter() - started
    spark = SparkSession.getActiveSession()
    assert spark is not None
    last = app.status()["last_batch_id"]
    batch_ms: list[int] = []
    add_ms: list[int] = []
    batches: list[int] = []
    for r in range(rounds):
        time.sleep(1.0)  # the previous round's micro-batch and its commit are over
        produce(address, src, BATCH, BATCH_KEYS)
        wait_for(lambda: app.status().get("inputs", 0) >= keys + (r + 1) * BATCH, "round read", timeout=600)
        end = app.status()["last_batch_id"]
        wait_for(lambda: any(p["batchId"] == end for p in progress_after(spark, last)), "progress report", timeout=60)
        # Spark's numInputRows counts the source's packed rows, not records: the records come
        # from the application's count, which must be exactly this round's
        if app.status()["inputs"] != keys + (r + 1) * BATCH:
            raise RuntimeError(f"W8 at {keys} keys: round {r} ended at {app.status()['inputs']} records read")
        rows = [p for p in progress_after(spark, last) if p["batchId"] <= end and p.get("numInputRows")]
        last = end
        batch_ms.append(sum(p["durationMs"].get("triggerExecution", 0) for p in rows))
        add_ms.append(sum(p["durationMs"].get("addBatch", 0) for p in rows))
        batches.append(len(rows))
    app.stop()
    runner.join()
    for topic in (src, out):
        count_and_delete(address, topic)
    return {
        "workload": "W8",
        "keys": keys,
        "build_s": round(build, 1),
        "batch_ms": batch_ms,
        "batches_per_round": batches,
        # the first round also pays the size's first stateful micro-batches of small size
        "median_batch_ms": statistics.median(batch_ms[1:] or batch_ms),
        "median_add_batch_ms": statistics.median(add_ms[1:] or add_ms),
    }


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--keys", default="10000,1000000", help="state sizes, comma-separated")
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--json", default=None)
    parser.add_argument("--state-buckets", type=int, default=None, help="the application's state_buckets (default: its own)")
    args = parser.parse_args()
    from streamspark.engine.session import get_spark, wait_warmup
    from streamspark.testing import EmbeddedBroker

    get_spark()
    wait_warmup(120)
    sizes = sorted(int(k) for k in args.keys.split(","))
    if min(sizes) < BATCH_KEYS:
        parser.error(f"every state size needs at least the {BATCH_KEYS} keys a timed batch uses")
    rows: list[dict] = []
    with EmbeddedBroker(nice=10) as broker, tempfile.TemporaryDirectory() as state_root:
        for keys in sizes:
            row = run_size(broker.address, keys, args.rounds, state_root, args.state_buckets)
            rows.append(row)
            print(json.dumps(row), flush=True)
    if len(rows) > 1:
        rows[-1]["ratio"] = round(rows[-1]["median_batch_ms"] / rows[0]["median_batch_ms"], 2)
        print(f"W8: a {BATCH}-record micro-batch at {sizes[-1]} keys costs {rows[-1]['ratio']}x what it costs at {sizes[0]}")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
