"""The demo pipeline on embedded defaults: ``python -m streamspark.demo``.

Kafka → Spark → a time-series data lake, with per-sensor silence alerts:

- an embedded Kafka-protocol broker on 127.0.0.1 receives readings from three sensors;
  ``sensor-c`` stops sending after ``--seconds``, the others keep going until its alert;
- a streamspark pipeline on local Spark converts units and sinks every reading into a lake
  of Hive-partitioned Parquet (``year=/month=/day=/hour=``) registered in an embedded Iceberg
  SQL catalog, with ``stream_timeout_ms`` set: the silent sensor raises one alert, which the
  callback also produces (fire-and-forget) to a ``stream-timeouts`` topic;
- at the end it queries the lake with DuckDB and through the Iceberg catalog and checks that
  every reading is there exactly once.
"""

from __future__ import annotations

import argparse
import json
import logging
import random
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Optional

__all__ = ("main",)

SENSORS = ("sensor-a", "sensor-b", "sensor-c")
SILENT = "sensor-c"


def _produce_readings(address: str, topic: str, silent_after: float, rate: float, stop: threading.Event, sent: list[int]) -> None:
    """Each sensor sends ``rate`` readings per second until ``stop``; sensor-c stops after ``silent_after`` s."""
    from confluent_kafka import Producer

    # librdkafka's own log lines go to a Python logger (served while the producer polls), so a
    # producer that outlives the broker at exit does not print reconnect errors
    producer = Producer({"bootstrap.servers": address, "linger.ms": 20}, logger=logging.getLogger("streamspark.demo.sensors"))
    rnd = random.Random(7)
    started = time.monotonic()
    seq = 0
    while not stop.is_set():
        elapsed = time.monotonic() - started
        for sensor in SENSORS:
            if sensor == SILENT and elapsed > silent_after:
                continue
            reading = {"sensor": sensor, "temp": round(rnd.gauss(24, 3), 2), "seq": seq, "ts_ms": int(time.time() * 1000)}
            producer.produce(topic, key=sensor.encode(), value=json.dumps(reading).encode())
            seq += 1
        producer.poll(0)
        time.sleep(1 / rate)
    producer.flush()
    sent.append(seq)
    print(f"  [producer] done: {seq} readings", flush=True)


def _stop_spark() -> None:
    from pyspark.sql import SparkSession

    session = SparkSession.getActiveSession()
    if session is not None:
        session.stop()


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(description="streamspark demo: embedded broker + local Spark + local data lake")
    parser.add_argument("--seconds", type=float, default=8.0, help=f"{SILENT} goes silent after this many seconds (default 8)")
    parser.add_argument("--max-seconds", type=float, default=180.0, help="give up waiting for the alert after this long")
    parser.add_argument("--rate", type=float, default=10.0, help="readings per second per sensor (default 10)")
    parser.add_argument("--silence-ms", type=int, default=5000, help="silence threshold per sensor (default 5000)")
    parser.add_argument("--output-dir", default="demo-output", help="where the lake is written (default ./demo-output)")
    args = parser.parse_args(argv)

    import duckdb

    from streamspark import Application, TopicConfig
    from streamspark.sinks.datalake import TSDataLakeSink
    from streamspark.testing import EmbeddedBroker

    out_dir = Path(args.output_dir).absolute()
    lake_root = out_dir / "lake"
    shutil.rmtree(lake_root, ignore_errors=True)
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
        readings = app.topic("sensor-readings", config=TopicConfig(num_partitions=3, replication_factor=1))
        timeouts = app.topic("stream-timeouts", key_serializer="bytes", value_serializer="bytes")
        side_producer = app.get_producer()
        alerts: list[Any] = []
        stop_producing = threading.Event()

        def on_stream_timeout(stream: Any) -> None:
            # fire-and-forget, as the callback must not block
            alerts.append(stream)
            name = stream.decode("utf-8", errors="replace") if isinstance(stream, bytes) else str(stream)
            print(f"  [alert] {name} went silent", flush=True)
            side_producer.produce(
                topic=timeouts.name,
                key=stream,
                value=json.dumps({"ts_ms": int(time.time() * 1000), "stream": name, "event": "stream_timeout"}).encode(),
            )
            if name == SILENT:  # the point is made: stop the sensors; the app stops once idle
                threading.Timer(0.5, stop_producing.set).start()

        sink = TSDataLakeSink(
            s3_prefix=str(lake_root),
            table_name="sensor_readings",
            hive_columns=["year", "month", "day", "hour"],
            timestamp_column="ts_ms",
            stream_timeout_ms=args.silence_ms,
            on_stream_timeout=on_stream_timeout,
        )
        sdf = app.dataframe(readings)
        sdf["temp_f"] = sdf["temp"] * 9 / 5 + 32
        sdf.sink(sink)

        app.topic_manager.ensure_topics()
        sent: list[int] = []
        producer = threading.Thread(
            target=_produce_readings,
            args=(broker.address, readings.name, args.seconds, args.rate, stop_producing, sent),
            daemon=True,
        )
        producer.start()
        give_up = threading.Timer(args.max_seconds, stop_producing.set)
        give_up.daemon = True
        give_up.start()
        print(
            f"streamspark demo: running the pipeline on local Spark; {SILENT} goes silent after {args.seconds:.0f}s,"
            " the sensors stop after its alert and the app 2 s after the last reading",
            flush=True,
        )
        started = time.monotonic()
        with side_producer:
            app.run(timeout=2)
        elapsed = time.monotonic() - started
        producer.join()
        give_up.cancel()
        _stop_spark()  # before the broker goes away, so no Spark worker keeps polling it
    print("streamspark demo: broker stopped", flush=True)

    total = sent[0] if sent else 0
    glob = f"{lake_root}/sensor_readings/**/*.parquet"
    print(f"\nstreamspark demo: {total} readings in {elapsed:.1f}s; the lake, queried with DuckDB:")
    print(f"  select sensor, count(*), avg(temp) from read_parquet('{glob}', hive_partitioning=true) group by all")
    con = duckdb.connect()
    rows = con.sql(
        f"select sensor, count(*) as readings, round(avg(temp), 2) as avg_temp, round(max(temp_f), 1) as max_temp_f, "
        f"min(year || '-' || month || '-' || day || ' ' || hour || 'h') as first_partition "
        f"from read_parquet('{glob}', hive_partitioning=true) group by sensor order by sensor"
    )
    assert rows is not None
    print(rows)
    in_lake = sum(r[1] for r in rows.fetchall())
    table = sink.catalog.load_table()
    in_catalog = table.scan().to_arrow().num_rows if table is not None else 0
    print(
        f"  DuckDB rows: {in_lake}; Iceberg table {sink.catalog.identifier}: {in_catalog} rows "
        f"in {len(table.metadata.snapshots) if table is not None else 0} snapshot(s) ({sink.catalog.describe()})"
    )
    print(f"  silence alerts: {[a.decode() if isinstance(a, bytes) else a for a in alerts]}")
    ok = total > 0 and in_lake == total and in_catalog == total and alerts == [SILENT.encode()]
    print("streamspark demo: OK" if ok else "streamspark demo: FAILED (see the numbers above)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
