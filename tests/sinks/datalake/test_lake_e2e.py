"""TSDataLakeSink end to end: the real broker, real Spark, the local filesystem and the embedded
SQL catalog; read back with DuckDB and pyiceberg."""

from __future__ import annotations

import json
import time

import duckdb
import pytest

from streamspark.exceptions import ProcessingError
from streamspark.sinks.datalake import LakeCatalogError, TSDataLakeSink

from ...conftest import json_messages

DAY_MS = 86_400_000
T0 = 1_704_067_200_000  # 2024-01-01T00:00:00Z


def _duck(root, table):
    return duckdb.sql(
        f"select * from read_parquet('{root}/{table}/**/*.parquet', hive_partitioning=true, union_by_name=true)"
    ).df()


def test_lake_rows_partitions_and_catalog(make_app, kafka, tmp_path):
    topic = kafka.new_topic(partitions=2)
    readings = [{"sensor": f"s{i % 3}", "ts_ms": T0 + i * (DAY_MS // 4), "temp": 20.0 + i} for i in range(12)]
    kafka.produce(
        topic,
        [{"value": json.dumps(r).encode(), "key": r["sensor"].encode(), "partition": i % 2} for i, r in enumerate(readings)],
    )
    root = tmp_path / "lake"
    sink = TSDataLakeSink(
        s3_prefix=str(root), table_name="readings", hive_columns=["year", "month", "day"], timestamp_column="ts_ms"
    )
    app = make_app()
    app.dataframe(app.topic(topic)).sink(sink)
    app.run(timeout=3)

    # paths: one directory per day, zero-padded
    days = sorted(p.name for p in (root / "readings" / "year=2024" / "month=01").iterdir())
    assert days == ["day=01", "day=02", "day=03"]
    files = list((root / "readings").rglob("*.parquet"))
    assert all(f.name.startswith("part-") for f in files)

    df = _duck(root, "readings").sort_values("ts_ms")
    assert df["temp"].tolist() == [r["temp"] for r in readings]
    assert df["ts_ms"].tolist() == [r["ts_ms"] for r in readings]  # the column keeps its int type
    assert [bytes(k) for k in df["__key"]] == [r["sensor"].encode() for r in readings]
    assert set(df["day"].astype(str)) == {"01", "02", "03"}

    table = sink.catalog.load_table()
    rows = table.scan().to_arrow().to_pylist()
    assert sorted(r["temp"] for r in rows) == [r["temp"] for r in readings]
    assert [f.name for f in table.spec().fields] == ["year", "month", "day"]
    assert table.scan(row_filter="day == '02'").to_arrow().num_rows == 4
    # one snapshot per micro-batch, each tagged with the query and batch id
    props = [s.summary.additional_properties for s in table.metadata.snapshots]
    assert all("streamspark.batch-id" in p and "streamspark.query-id" in p for p in props)


def test_tasks_types_are_conformed_to_the_table_across_batches(make_app, kafka, tmp_path):
    """Tasks take the table's schema from the driver, not the catalog: in the first batch (no
    table yet) each task writes its own types (ints in one partition, floats in the other) and
    the driver conforms them; later batches' ints still land in the double column."""
    topic = kafka.new_topic(partitions=2)
    readings = [{"ts_ms": T0 + i, "temp": (20 + i) if i % 2 == 0 else 20.5 + i, "i": i} for i in range(8)]
    kafka.produce(topic, [{"value": json.dumps(r).encode(), "key": b"k", "partition": r["i"] % 2} for r in readings])
    root = tmp_path / "lake"
    sink = TSDataLakeSink(s3_prefix=str(root), table_name="readings", hive_columns=["year"], timestamp_column="ts_ms")
    app = make_app(max_records_per_partition=2)  # two micro-batches
    app.dataframe(app.topic(topic)).sink(sink)
    app.run(timeout=3)

    import pyarrow.parquet as pq

    files = sorted((root / "readings").rglob("*.parquet"))
    assert len({f.name.split("-")[1] for f in files}) == 2  # files of two batches
    assert {str(pq.read_schema(f).field("temp").type) for f in files} == {"double"}
    rows = sorted(sink.catalog.load_table().scan().to_arrow().to_pylist(), key=lambda r: r["i"])
    assert [r["temp"] for r in rows] == [float(r["temp"]) for r in readings]


def _partition_contents(root, table):
    """Each partition directory's column types and rows (by timestamp), whatever the file names."""
    import pyarrow.parquet as pq

    out = {}
    for path in (root / table).rglob("*.parquet"):
        data = pq.read_table(path, partitioning=None)
        schemas, rows = out.setdefault(str(path.parent.relative_to(root)), (set(), []))
        schemas.add(str(data.schema))
        rows.extend(data.to_pylist())
    return {d: (schemas, sorted(rows, key=lambda r: (r["ts_ms"], r["i"]))) for d, (schemas, rows) in out.items()}


#: the readings of the raw-chunk test, as schemaless Avro
READING_AVRO = {
    "type": "record",
    "name": "Reading",
    "fields": [
        {"name": "ts_ms", "type": "long"},
        {"name": "i", "type": "int"},
        {"name": "temp", "type": "double"},
        {"name": "site", "type": "string"},
        {"name": "ok", "type": ["null", "boolean"]},
    ],
}


class _ChunkLog(TSDataLakeSink):
    """Notes in a file each raw chunk a Spark task offered it, and whether it took it."""

    log: str = ""

    def _note(self, kind: str, taken: bool, count: int) -> bool:
        with open(self.log, "a") as out:
            out.write(f"{kind} {taken} {count}\n")
        return taken

    def add_raw_json(self, values, keys, timestamps):
        return self._note("json", super().add_raw_json(values, keys, timestamps), len(values))

    def add_raw_avro(self, values, keys, timestamps, decoder):
        return self._note("avro", super().add_raw_avro(values, keys, timestamps, decoder), len(values))


@pytest.mark.parametrize("fmt", ["json", "avro"])
def test_raw_chunks_write_what_the_per_record_path_writes(make_app, kafka, tmp_path, fmt):
    """``collect=False`` (as a production run): tasks hand the sink whole chunks of raw JSON
    (or schemaless Avro, decoded into Arrow at once); with collection on, the same records go
    one by one. Same partitions, types and rows."""
    import io

    import fastavro

    from streamspark.models.serializers.avro import AvroDeserializer

    topic = kafka.new_topic(partitions=2)
    readings = [
        {
            "ts_ms": T0 + (i % 6) * 1_800_000 + i,
            "i": i,
            "temp": 20.5 + i if fmt == "avro" or i % 3 == 0 else 20 + i,
            "site": ["north", "süd", "東"][i % 3],
            **({"ok": i % 4 == 0} if i % 2 else ({"ok": None} if fmt == "avro" else {})),
        }
        for i in range(60)
    ]
    parsed = fastavro.parse_schema(READING_AVRO)

    def encode(reading):
        if fmt == "json":
            return json.dumps(reading).encode()
        buffer = io.BytesIO()
        fastavro.schemaless_writer(buffer, parsed, reading)
        return buffer.getvalue()

    kafka.produce(topic, [{"value": encode(r), "key": f"k{r['i'] % 5}".encode(), "partition": r["i"] % 2} for r in readings])
    roots = {}
    for collect in (False, True):
        roots[collect] = root = tmp_path / f"lake-{collect}"
        app = make_app()
        source = app.topic(topic, value_deserializer=AvroDeserializer(READING_AVRO)) if fmt == "avro" else app.topic(topic)
        sink = _ChunkLog(s3_prefix=str(root), table_name="t", hive_columns=["year", "month", "day", "hour"])
        sink.log = str(tmp_path / f"chunks-{collect}.log")
        app.dataframe(source).sink(sink)
        app.run(timeout=3, collect=collect)
    raw, plain = _partition_contents(roots[False], "t"), _partition_contents(roots[True], "t")
    assert len(raw) == 3  # hours
    assert raw == plain
    assert sum(len(rows) for _, rows in raw.values()) == len(readings)
    offered = [line.split() for line in (tmp_path / "chunks-False.log").read_text().splitlines()]
    assert {kind for kind, _, _ in offered} == {fmt} and all(taken == "True" for _, taken, _ in offered)
    assert sum(int(count) for _, _, count in offered) == len(readings)  # every record in a taken chunk
    assert not (tmp_path / "chunks-True.log").exists()  # collected: record by record


@pytest.mark.parametrize("collect", [True, False])
def test_non_dict_values_fail_the_batch_and_lose_nothing(make_app, kafka, tmp_path, collect):
    topic = kafka.new_topic()
    kafka.produce(topic, json_messages([{"ts_ms": T0, "v": 1}, 42, {"ts_ms": T0, "v": 3}]))
    root = tmp_path / "lake"
    sink = TSDataLakeSink(s3_prefix=str(root), table_name="t", hive_columns=["year"])
    app = make_app()
    app.dataframe(app.topic(topic)).sink(sink)
    with pytest.raises(ProcessingError) as info:
        app.run(timeout=3, collect=collect)  # without collection the task offers raw chunks first
    assert "dict values only" in str(info.value)
    assert info.value.offset == 1
    assert sink.catalog.load_table() is None  # nothing registered from the failed batch
    # fix the pipeline; the same app re-reads from the uncommitted offsets: nothing lost
    app2 = make_app(consumer_group=app.config.consumer_group, state_dir=str(app.config.state_dir))
    app2.dataframe(app2.topic(topic)).apply(lambda v: v if isinstance(v, dict) else {"ts_ms": T0, "v": v}).sink(sink)
    app2.run(timeout=3)
    assert sorted(_duck(root, "t")["v"]) == [1, 3, 42]
    assert sorted(r["v"] for r in sink.catalog.load_table().scan().to_arrow().to_pylist()) == [1, 3, 42]


def test_silence_alert_end_to_end(make_app, kafka, tmp_path):
    """sensor-a stops, sensor-b keeps sending: the callback fires once, for sensor-a, in the driver."""
    topic = kafka.new_topic()
    fired: list[tuple[bytes, float]] = []
    sink = TSDataLakeSink(
        s3_prefix=str(tmp_path / "lake"),
        table_name="t",
        hive_columns=["year"],
        stream_timeout_ms=2_000,
        on_stream_timeout=lambda k: fired.append((k, time.monotonic())),
    )
    app = make_app()
    app.dataframe(app.topic(topic)).sink(sink)

    import threading

    stop = threading.Event()

    def produce() -> None:
        kafka.produce(topic, [{"value": json.dumps({"ts_ms": T0, "n": 0}).encode(), "key": b"sensor-a"}])
        while not stop.is_set():
            kafka.produce(topic, [{"value": json.dumps({"ts_ms": T0, "n": 1}).encode(), "key": b"sensor-b"}])
            time.sleep(0.3)

    thread = threading.Thread(target=produce, daemon=True)
    thread.start()
    threading.Timer(25, app.stop).start()
    app.run()
    stop.set()
    thread.join()
    assert [k for k, _ in fired] == [b"sensor-a"]


def test_durable_silence_survives_a_restart(make_app, kafka, tmp_path):
    """sensor-a sends only before a restart; with stream_timeout_durable its silence still fires after it."""
    import threading

    topic = kafka.new_topic()
    group, state = "durable-silence", str(tmp_path / "state")
    fired: list[bytes] = []

    def sink():
        return TSDataLakeSink(
            s3_prefix=str(tmp_path / "lake"),
            table_name="t",
            hive_columns=["year"],
            stream_timeout_ms=8_000,
            on_stream_timeout=fired.append,
            stream_timeout_durable=True,
        )

    kafka.produce(topic, [{"value": json.dumps({"ts_ms": T0}).encode(), "key": k} for k in (b"sensor-a", b"sensor-b")])
    app = make_app(consumer_group=group, state_dir=state)
    app.dataframe(app.topic(topic)).sink(sink())
    app.run(timeout=1)
    assert fired == []  # stopped long before the threshold
    saved = list((tmp_path / "state").rglob("t-silence.pickle"))
    assert saved, "the tracker table is saved in the checkpoint"

    stop = threading.Event()

    def produce_b() -> None:
        while not stop.is_set():
            kafka.produce(topic, [{"value": json.dumps({"ts_ms": T0}).encode(), "key": b"sensor-b"}])
            time.sleep(0.3)

    feeder = threading.Thread(target=produce_b, daemon=True)
    feeder.start()
    app2 = make_app(consumer_group=group, state_dir=state)
    app2.dataframe(app2.topic(topic)).sink(sink())
    threading.Timer(25, app2.stop).start()
    app2.run()
    stop.set()
    feeder.join()
    assert fired == [b"sensor-a"]


def test_unparsable_timestamp_and_broken_catalog_lose_nothing(make_app, kafka, tmp_path):
    """A flush error (bad timestamp) and a catalog failure at commit both fail the micro-batch
    with a clear error; after the fix the replay registers everything exactly once."""
    topic = kafka.new_topic()
    root = tmp_path / "lake"
    group, state = "lake-errors", str(tmp_path / "state")

    def run(transform=None):
        app = make_app(consumer_group=group, state_dir=state)
        sdf = app.dataframe(app.topic(topic))
        if transform is not None:
            sdf = sdf.apply(transform)
        sdf.sink(TSDataLakeSink(s3_prefix=str(root), table_name="t", hive_columns=["year"]))
        app.run(timeout=2)

    kafka.produce(topic, json_messages([{"ts_ms": T0, "i": 0}, {"ts_ms": "not a time", "i": 1}]))
    with pytest.raises(ProcessingError, match="sink failed.*Cannot read timestamp column 'ts_ms'"):
        run()
    run(lambda v: {**v, "ts_ms": T0} if v["ts_ms"] == "not a time" else v)  # the fixed pipeline

    catalog_db = root / "_catalog" / "catalog.db"
    good = catalog_db.read_bytes()
    # the catalog breaks while the app runs: the next batch fails, nothing is committed
    import threading

    app = make_app(consumer_group=group, state_dir=state)
    app.dataframe(app.topic(topic)).sink(TSDataLakeSink(s3_prefix=str(root), table_name="t", hive_columns=["year"]))
    failure: list[BaseException] = []

    def run_until_failure() -> None:
        try:
            app.run()
        except BaseException as exc:  # noqa: BLE001 - handed to the test thread
            failure.append(exc)

    thread = threading.Thread(target=run_until_failure)
    thread.start()
    time.sleep(12)  # the query is up and idle
    catalog_db.write_bytes(b"this is not a database" * 100)
    kafka.produce(topic, json_messages([{"ts_ms": T0, "i": 2}]))
    thread.join(120)
    assert not thread.is_alive()
    # the workers (setting up for this run) or the driver (committing) find it broken
    assert failure and isinstance(failure[0], ProcessingError)
    assert "Cannot reach the sql catalog" in str(failure[0]) or "could not commit batch" in str(failure[0])
    # and a catalog that is broken at start-up is refused before anything is read
    with pytest.raises(LakeCatalogError, match="sql catalog"):
        run()
    catalog_db.write_bytes(good)
    run()
    table = TSDataLakeSink(s3_prefix=str(root), table_name="t", hive_columns=["year"]).catalog.load_table()
    assert sorted(table.scan().to_arrow().column("i").to_pylist()) == [0, 1, 2]
    assert sorted(_duck(root, "t")["i"]) == [0, 1, 2]
