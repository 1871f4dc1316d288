"""Benchmarks: streamspark vs a bare confluent-kafka loop on the embedded broker.

Usage: ``.venv/bin/python bench/run.py [--messages N] [--json out.json] [--no-quix]``

Workloads (~150-byte JSON values, 4 partitions, keys of 10k sensors):
- W1 (stateless): filter + column arithmetic + apply → to_topic;
- W2 (stateful): running count per key → to_topic;
- W3 (windows): 10 s tumbling window per key on the payload's event time,
  ``.agg(avg=Mean("temp"), n=Count()).final()`` → to_topic;
- W4 (data lake): every record into Hive-partitioned Parquet (year/month/day/hour) with the
  embedded Iceberg catalog. The reference's lake sink needs its vendor's storage client, so Quix
  Streams runs its local Parquet file sink instead (``LocalFileSink(format="parquet")``: no hour
  partitions, no catalog), and the bare loop writes the hour partitions without a catalog;
- W5 (latency): the W1 pipeline while a producer sends 5k msg/s for 40 s; p50/p99 of
  receive time at a consumer of the output - send time carried in the value, over the messages
  sent after a 20 s warm-up (start-up excluded).

Peak memory: resident memory sampled every 0.2 s - streamspark: the driver process and its
children (JVM, Python workers), not the broker; Quix Streams: its process; the loop: its process
(the bench's own Python process, so it includes the interpreter and libraries).

Before each system's run the bench waits until the broker is quiet (it keeps working for
seconds after a large write, which would otherwise land in the next system's measurement).
The broker runs at a lower CPU priority (``nice`` 10, ``--broker-nice``): noida-db rewrites its
whole store (~450 MB of JSON with the 1M input) after every change, about a core for as long as
any system writes, which a real broker does not do. Lowered, that work yields to the system
under test instead of taking one of the machine's two cores from it (a single-threaded system
leaves it a core either way).

Systems, one after another on the same input: a bare confluent-kafka loop (the practical
limit), streamspark, and Quix Streams (installed in ``bench/.venv-quix`` on first use). Spark
start-up is excluded: the session is created first, and its background start of Spark's
Python processes (``streamspark.engine._warmup``) is waited for, as a one-time cost of the
process like the JVM's. Each query's own start-up is included (its source-planning process,
its first micro-batch), as is each Quix app's start-up.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import tempfile
from pathlib import Path
import sys
import time
import uuid
from typing import Callable, Optional

from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

sys.path.insert(0, str(Path(__file__).parent))
from _measure import LatencyProbe, PeakRSS, wait_broker_quiet  # noqa: E402


#: noida-db ignores fetch size limits and answers a fetch with the partitions' whole tails, so a
#: consumer of a large topic needs room for that response (librdkafka's default is 100 MB; real
#: Kafka brokers honour the limits). Every system of the bench gets the same setting.
BIG_FETCH = {"receive.message.max.bytes": 1_000_000_000}


def make_topic(address: str, partitions: int = 4) -> str:
    name = f"bench-{uuid.uuid4().hex[:8]}"
    admin = AdminClient({"bootstrap.servers": address})
    for f in admin.create_topics([NewTopic(name, partitions, 1)]).values():
        f.result(30)
    time.sleep(0.5)
    return name


def _json_bytes(value: dict) -> bytes:
    return json.dumps(value).encode()


def load(
    address: str,
    topic: str,
    n: int,
    encode: Callable[[dict], bytes] = _json_bytes,
    ts0: int = 1_700_000_000_000,
    timestamped: bool = False,
) -> None:
    """``n`` sensor readings into ``topic``'s 4 partitions, each value written by ``encode``
    (JSON by default), reading ``i`` with ``ts`` ``ts0 + i``. With ``timestamped`` that is also
    its Kafka timestamp (then ``ts0`` must be recent: the broker deletes messages older than its
    retention, 7 days)."""
    p = Producer({"bootstrap.servers": address, "linger.ms": 50, "batch.num.messages": 10000})
    rnd = random.Random(1)
    for i in range(n):
        v = {
            "id": i,
            "sensor": f"sensor-{i % 10000:05d}",
            "temp": round(rnd.uniform(0, 50), 3),
            "hum": round(rnd.uniform(0, 100), 3),
            "site": "plant-north-7",
            "ts": ts0 + i,
        }
        while True:
            try:
                p.produce(
                    topic,
                    key=v["sensor"].encode(),
                    value=encode(v),
                    partition=i % 4,
                    **({"timestamp": v["ts"]} if timestamped else {}),
                )
                break
            except BufferError:
                p.poll(0.1)
    p.flush()


def count_and_delete(address: str, topic: str) -> int:
    """The number of messages in an output topic, which is then deleted: the embedded broker
    rewrites its whole store every few seconds while data changes, so every topic left behind
    would slow down the runs after it (whichever system they measure)."""
    c = Consumer({"bootstrap.servers": address, "group.id": "bench-count"})
    md = c.list_topics(topic, timeout=10).topics[topic]
    total = sum(c.get_watermark_offsets(TopicPartition(topic, p), timeout=10)[1] for p in md.partitions)
    c.close()
    admin = AdminClient({"bootstrap.servers": address})  # kept alive until the deletion is answered
    for fut in admin.delete_topics([topic]).values():
        fut.result(30)
    return total


def parquet_rows(root: str) -> int:
    """The rows of every Parquet file under ``root`` (W4 outputs)."""
    import pyarrow.parquet as pq

    return sum(pq.read_metadata(path).num_rows for path in Path(root).rglob("*.parquet"))


def transform(v: dict) -> dict:
    return {**v, "tag": "hot"}


def bare_loop(
    address: str,
    src: str,
    out: str,
    n: int,
    workload: str = "W1",
    poll_timeout: float = 1.0,
    done: Optional[Callable[[int], bool]] = None,
    lake_dir: Optional[str] = None,
) -> float:
    """The bare confluent-kafka loop over ``n`` input messages (or until ``done(seen)``); seconds
    taken. W4 writes under ``lake_dir``."""
    import orjson

    c = Consumer(
        {
            "bootstrap.servers": address,
            "group.id": f"bare-{uuid.uuid4().hex[:6]}",
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
            **BIG_FETCH,
        }
    )
    p = Producer({"bootstrap.servers": address, "linger.ms": 20})
    c.subscribe([src])
    seen = 0
    counts: dict[bytes, int] = {}
    windows: dict[bytes, dict[int, tuple[float, int]]] = {}
    rows: list[dict] = []
    lake_dir = lake_dir or tempfile.mkdtemp(prefix="bench-lake-")
    started = time.perf_counter()
    while seen < n and not (done is not None and done(seen)):
        for m in c.consume(10000, timeout=poll_timeout):
            if m.error():
                continue
            seen += 1
            v = orjson.loads(m.value())
            if workload == "W2":
                k = m.key()
                counts[k] = counts.get(k, 0) + 1
                v["n"] = counts[k]
                p.produce(out, key=k, value=orjson.dumps(v))
            elif workload == "W3":
                k = m.key()
                start = v["ts"] - v["ts"] % 10_000
                win = windows.setdefault(k, {})
                for old in [s for s in win if s + 10_000 <= v["ts"]]:
                    total, cnt = win.pop(old)
                    p.produce(out, key=k, value=orjson.dumps({"avg": total / cnt, "n": cnt, "start": old, "end": old + 10_000}))
                total, cnt = win.get(start, (0.0, 0))
                win[start] = (total + v["temp"], cnt + 1)
            elif workload == "W4":
                rows.append({**v, "__key": m.key()})
                if len(rows) >= 50_000:
                    _write_lake(lake_dir, rows)
                    rows = []
            elif v["temp"] > 25:
                v["temp_f"] = v["temp"] * 9 / 5 + 32
                v = transform(v)
                while True:
                    try:
                        p.produce(out, key=m.key(), value=orjson.dumps(v))
                        break
                    except BufferError:
                        p.poll(0.1)
        p.poll(0)
    if rows:
        _write_lake(lake_dir, rows)
    p.flush()
    c.commit(asynchronous=False)
    elapsed = time.perf_counter() - started
    c.close()
    return elapsed


def _write_lake(root: str, rows: list) -> None:
    """The bare loop's lake writer: one Parquet file per hour partition (no catalog)."""
    import datetime as dt

    import pyarrow as pa
    import pyarrow.parquet as pq

    groups: dict = {}
    for r in rows:
        t = dt.datetime.fromtimestamp(r["ts"] / 1000, dt.timezone.utc)
        groups.setdefault((t.year, t.month, t.day, t.hour), []).append(r)
    for (y, mo, d, h), part in groups.items():
        path = Path(root, f"year={y}", f"month={mo:02d}", f"day={d:02d}", f"hour={h:02d}")
        path.mkdir(parents=True, exist_ok=True)
        pq.write_table(pa.Table.from_pylist(part), path / f"part-{uuid.uuid4().hex}.parquet")


def event_time(value, headers, timestamp, timestamp_type) -> int:
    return value["ts"]


def count_state(value: dict, state) -> dict:
    n = state.get("n", 0) + 1
    state.set("n", n)
    return {**value, "n": n}


def streamspark_run(address: str, src: str, out: str, n: int, state_dir: str, workload: str) -> float:
    """streamspark over the input; W4 writes its lake under ``out`` (a directory)."""
    from streamspark import Application

    from streamspark.dataframe.windows import Count, Mean
    from streamspark.sinks.datalake import TSDataLakeSink

    app = Application(
        broker_address=address,
        consumer_group=f"ss-{uuid.uuid4().hex[:6]}",
        auto_offset_reset="earliest",
        state_dir=state_dir,
        loglevel="INFO",
        max_records_per_partition=250_000,
        consumer_extra_config=BIG_FETCH,
    )
    sdf = app.dataframe(app.topic(src, timestamp_extractor=event_time if workload == "W3" else None))
    if workload == "W1":
        sdf = sdf[sdf["temp"] > 25]
        sdf["temp_f"] = sdf["temp"] * 9 / 5 + 32
        sdf = sdf.apply(transform)
    elif workload == "W2":
        sdf = sdf.apply(count_state, stateful=True)
    elif workload == "W3":
        sdf = sdf.tumbling_window(10_000).agg(avg=Mean("temp"), n=Count()).final()
    if workload == "W4":
        sdf.sink(
            TSDataLakeSink(
                s3_prefix=out, table_name="readings", hive_columns=["year", "month", "day", "hour"], timestamp_column="ts"
            )
        )
    else:
        sdf.to_topic(app.topic(out))
    started = time.perf_counter()
    app.run(timeout=2.0, collect=False)
    return time.perf_counter() - started - 2.0


W5_RATE, W5_SECONDS, W5_WARMUP = 5000, 40.0, 20.0


def run_w5(address: str, system: str, quix_python: Optional[str], broker_pid: int) -> Optional[dict]:
    """W5 for one system: the W1 pipeline under a fixed 5k msg/s load; latency percentiles."""
    src, out = make_topic(address), make_topic(address)
    probe = LatencyProbe(address, src, out, W5_RATE, W5_SECONDS, W5_WARMUP)
    n = int(W5_RATE * W5_SECONDS)
    if system == "quixstreams":
        if quix_python is None:
            return None
        proc = subprocess.Popen(
            [quix_python, str(Path(__file__).with_name("quix_workloads.py")), address, "W1", src, out, tempfile.mkdtemp()],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        probe.start()
        with PeakRSS(proc.pid) as mem:
            proc.communicate()
    elif system == "streamspark":
        probe.start()
        with PeakRSS(exclude=[broker_pid]) as mem:
            streamspark_run(address, src, out, n, tempfile.mkdtemp(), "W1")
    else:
        probe.start()
        with PeakRSS(tree=False) as mem:
            # the probe may send fewer than n when its ticks fall behind: stop once all it sent arrived
            bare_loop(
                address,
                src,
                out,
                n,
                "W1",
                poll_timeout=0.02,
                done=lambda seen: probe.done_producing.is_set() and seen >= probe.sent,
            )
    probe.done_producing.wait()
    stats = probe.stop()
    outputs = count_and_delete(address, out)
    count_and_delete(address, src)  # this run's input: the next system gets a fresh one
    return {"workload": "W5", "system": system, "seconds": W5_SECONDS, "outputs": outputs, "peak_mb": mem.peak_mb, **stats}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--messages", type=int, default=200_000)
    parser.add_argument("--json", default=None)
    parser.add_argument("--no-quix", action="store_true", help="skip Quix Streams")
    parser.add_argument("--workloads", default="W1,W2,W3,W4,W5")
    parser.add_argument("--broker-nice", type=int, default=10, help="the broker's nice increment (0: same priority)")
    args = parser.parse_args()
    from streamspark.engine.session import get_spark as _get_spark, wait_warmup
    from streamspark.testing import EmbeddedBroker

    def get_spark() -> None:
        _get_spark()
        wait_warmup(120)

    results: list[dict] = []

    def record(row: dict) -> None:
        """Keep a result and print it at once (an interrupted run still shows what it measured)."""
        results.append(row)
        if row["workload"] != "W5":
            print(
                f"{row['workload']} {row['system']}: {row['seconds']:.2f}s, {row['outputs']} outputs, "
                f"peak {row['peak_mb']:.0f} MB",
                flush=True,
            )

    workloads = args.workloads.split(",")
    quix_python = None if args.no_quix else install_quix()
    with EmbeddedBroker(nice=args.broker_nice) as broker:
        src = make_topic(broker.address)
        t = time.perf_counter()
        load(broker.address, src, args.messages)
        print(f"loaded {args.messages} messages in {time.perf_counter() - t:.1f}s", flush=True)
        broker_pid = -1  # noida-db daemonizes: it is not in our process tree
        for workload in workloads:
            if workload == "W5":
                get_spark()
                for system in ("confluent-kafka loop", "quixstreams", "streamspark"):
                    wait_broker_quiet(broker)
                    row = run_w5(broker.address, system, quix_python, broker_pid)
                    if row is not None:
                        record(row)
                        print(
                            f"W5 {system}: p50 {row['p50_ms']:.0f} ms, p99 {row['p99_ms']:.0f} ms "
                            f"({row['measured']} messages measured)",
                            flush=True,
                        )
                continue

            def new_output(prefix: str) -> str:
                """Where a system writes: a fresh topic, or for W4 a fresh lake directory."""
                return make_topic(broker.address) if workload != "W4" else tempfile.mkdtemp(prefix=prefix)

            def outputs_of(out: str) -> int:
                """What a system wrote (the topic is then deleted, see ``count_and_delete``)."""
                return count_and_delete(broker.address, out) if workload != "W4" else parquet_rows(out)

            out = new_output("bench_loop_lake_")
            wait_broker_quiet(broker)
            with PeakRSS(tree=False) as mem:
                el = bare_loop(broker.address, src, out, args.messages, workload, lake_dir=out)
            record(
                {
                    "workload": workload,
                    "system": "confluent-kafka loop",
                    "seconds": el,
                    "outputs": outputs_of(out),
                    "peak_mb": mem.peak_mb,
                }
            )
            if quix_python is not None:
                # W4: Quix Streams writes with its Parquet file sink (see quix_workloads.py)
                out = new_output("bench_quix_lake_")
                wait_broker_quiet(broker)
                proc = subprocess.Popen(
                    [
                        quix_python,
                        str(Path(__file__).with_name("quix_workloads.py")),
                        broker.address,
                        workload,
                        src,
                        out,
                        tempfile.mkdtemp(),
                    ],
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    text=True,
                )
                with PeakRSS(proc.pid) as mem:
                    stdout, stderr = proc.communicate()
                if proc.returncode == 0:
                    el = json.loads(stdout.strip().splitlines()[-1])["seconds"]
                    record(
                        {
                            "workload": workload,
                            "system": "quixstreams",
                            "seconds": el,
                            "outputs": outputs_of(out),
                            "peak_mb": mem.peak_mb,
                        }
                    )
                else:
                    print(f"quixstreams {workload} failed: {stderr[-1500:]}", file=sys.stderr)
            get_spark()
            out = new_output("bench_streamspark_lake_")
            wait_broker_quiet(broker)
            with PeakRSS(exclude=[broker_pid]) as mem:
                el = streamspark_run(broker.address, src, out, args.messages, tempfile.mkdtemp(), workload)
            record(
                {"workload": workload, "system": "streamspark", "seconds": el, "outputs": outputs_of(out), "peak_mb": mem.peak_mb}
            )
        from pyspark.sql import SparkSession

        SparkSession.getActiveSession().stop()
    for r in results:
        r["msg_per_s"] = W5_RATE if r["workload"] == "W5" else args.messages / r["seconds"]
    limits = {r["workload"]: r["msg_per_s"] for r in results if r["system"] == "confluent-kafka loop"}
    quix = {r["workload"]: r["msg_per_s"] for r in results if r["system"] == "quixstreams"}
    print(
        f"{'workload':8} {'system':22} {'msg/s':>10} {'vs quix':>8} {'vs limit':>9} {'outputs':>9} {'peak MB':>8}"
        f" {'p50 ms':>7} {'p99 ms':>7}"
    )
    for r in results:
        r["ratio_to_limit"] = r["msg_per_s"] / limits[r["workload"]] if r["workload"] in limits else None
        r["ratio_to_quix"] = r["msg_per_s"] / quix[r["workload"]] if r["workload"] in quix else None
        if r["workload"] == "W5":  # fixed rate: latency is what is compared
            r["ratio_to_quix"] = r["ratio_to_limit"] = None
        vs_quix = f"{r['ratio_to_quix']:8.2f}" if r["ratio_to_quix"] is not None else f"{'-':>8}"
        vs_limit = f"{r['ratio_to_limit']:9.2f}" if r["ratio_to_limit"] is not None else f"{'-':>9}"
        lat = f" {r['p50_ms']:7.0f} {r['p99_ms']:7.0f}" if "p50_ms" in r else f" {'-':>7} {'-':>7}"
        print(
            f"{r['workload']:8} {r['system']:22} {r['msg_per_s']:10.0f} {vs_quix} {vs_limit} {r['outputs']:9d}"
            f" {r.get('peak_mb', 0):8.0f}{lat}"
        )
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=2)
    return 0


def install_quix() -> str:
    """Quix Streams in its own virtual environment (bench/.venv-quix), created on first use."""
    venv = Path(__file__).with_name(".venv-quix")
    python = venv / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "-q", "quixstreams[parquet,avro]"], check=True)
    elif subprocess.run([str(python), "-c", "import pyarrow, fastavro"], capture_output=True).returncode != 0:
        # a venv from before W4 / W1-avro ran on Quix Streams: add its Parquet and Avro extras
        subprocess.run([str(python), "-m", "pip", "install", "-q", "quixstreams[parquet,avro]"], check=True)
    return str(python)


if __name__ == "__main__":
    sys.exit(main())
