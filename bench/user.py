"""User-level benchmark: the same ``app.py`` run as a user runs it, ``python app.py``.

Usage::

    .venv/bin/python bench/user.py [--messages 500000] [--workloads W1,W2,W3,W6,W1-avro,W7,W1-csv,W5,W5-stateful] [--no-quix]

Each workload is one program text, written once with ``from streamspark import Application``
and once with ``from quixstreams import Application`` (the only line that differs), with the
production defaults of both libraries: ``Application(broker_address=..., consumer_group=...,
auto_offset_reset="earliest")`` and ``app.run()``. The bench starts it as a subprocess and the
clock starts at the launch, so the interpreter's, the library's and (for streamspark) Spark's
start-up are all counted. A ``WatermarkClock`` notes when each output arrives by polling the
output topic's high watermarks every 10 ms (a consumer would spin against the embedded broker,
which ignores ``fetch.wait.max.ms``, and take a core from the system under test).

Reported per (workload, system):

- ``first_output_s``: launch to the first output;
- ``last_output_s``: launch to the last output (the run is over once no output has arrived for
  ``--idle`` seconds; the program is then stopped with SIGTERM);
- ``steady_out_per_s``: outputs per second between the arrival of 10% and 90% of them;
- ``batch_out_per_s`` (streamspark): outputs per second of its micro-batches, their outputs
  over their summed durations, which the last line of the program's log reports (``Stopped after 1
  batch(es): 500000 in, 500000 out, 4.10s in micro-batches with data``). A
  micro-batch produces its outputs in a burst at its end (a stateful one after reading and
  shuffling all its records), so when a backlog is read in one or two micro-batches the 10%-90%
  window of ``steady_out_per_s`` spans only that burst; this rate counts the whole micro-batch;
- ``outputs_per_250ms``: how many outputs arrived in each quarter second from the launch;
- ``outputs``, ``peak_mb`` (resident memory of the program and its children: for streamspark
  the driver, Spark's JVM and its Python workers) and ``peak_pss_mb`` (the same as proportional
  set sizes: pages that forked processes share count once; see ``_measure.PeakRSS``);
  ``peak_by_process``: when the resident sets' sum peaked, each process's label, pid, resident
  set and proportional set size (MB), largest first.

Results go to ``bench/results/latest.json`` (``--json`` to change): a ``rows`` list and, per
workload, ``ratio_to_quix_steady`` (streamspark's steady rate / Quix Streams'),
``ratio_to_quix_batch_rate`` (streamspark's ``batch_out_per_s`` / Quix Streams' steady rate),
``ratio_to_quix_last_output`` (Quix Streams' time to the last output / streamspark's: above 1
means streamspark finished first) and ``ratio_to_quix_first_output`` (the same for the first
output), and ``cpu_loop_s``, the seconds a 10M-addition Python loop took before and after the
run (the machine's speed, which varies from hour to hour). ``bench/report.py
bench/results/latest.json`` turns it into the tables of ``docs/benchmarks.md``.

Workloads (~150-byte JSON values, 4 partitions, keys of 10k sensors, as ``bench/run.py``):
W1 filter + column arithmetic + apply -> topic; W2 running count per key -> topic; W3 10 s
tumbling window per key on the payload's event time, mean and count, ``.final()`` -> topic;
W6 ``group_by`` a field derived from the value (100 groups) + running count per group -> topic;
W1-avro is W1 on the same readings written as schemaless Avro (:data:`READING`), read with
``AvroDeserializer`` and written with ``AvroSerializer`` (the input schema plus ``temp_f`` and
``tag``) of the library under test; W7 is ``join_asof(how="left", on_merge="keep-left")`` of the
readings (carrying their ``ts`` as Kafka timestamp) with a second topic of device configs, one
per 100 readings (:func:`load_configs`), written first. For W7 the bench also reads every
output's ``id`` and ``version`` and compares the libraries' joins (``checks`` in the JSON).
W1-csv is W1 fed by a ``CSVSource`` instead of a topic: the same readings as a CSV file
(:func:`write_csv`), each row's string columns converted by an ``apply`` first; the source's
process produces the rows to its topic while the pipeline runs, so the clock counts both. Its
rows also report ``rows_in`` (the rows the source produced) and ``steady_rows_in_per_s`` (the
steady output rate in input rows: outputs are the rows the filter kept).

An input topic is deleted once no later workload of the run reads it (the embedded broker
rewrites its whole store after every change, so topics left behind slow down later runs).

W5 and W5-stateful measure latency, not a backlog: W1's pipeline (W5) or W2's running count
(W5-stateful) started while a producer sends 5k msg/s to a fresh topic for 60 s, each value
carrying its send time. Their rows report ``p50_ms`` and ``p99_ms`` of arrival on the output
topic minus send time, over the messages sent from 30 s after the launch on (start-up and the
backlog it leaves are not counted), and ``measured``, how many that was.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import random
import re
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any, Callable, Optional


sys.path.insert(0, str(Path(__file__).parent))
from _measure import LatencyProbe, PeakRSS, WatermarkClock, cpu_loop_seconds, read_topic, wait_broker_quiet  # noqa: E402
from confluent_kafka.admin import AdminClient  # noqa: E402
from run import count_and_delete, install_quix, load, make_topic  # noqa: E402

#: the Avro schema of the W1-avro input: the fields of ``bench/run.py``'s JSON values
READING: dict[str, Any] = {
    "type": "record",
    "name": "Reading",
    "fields": [
        {"name": "id", "type": "long"},
        {"name": "sensor", "type": "string"},
        {"name": "temp", "type": "double"},
        {"name": "hum", "type": "double"},
        {"name": "site", "type": "string"},
        {"name": "ts", "type": "long"},
    ],
}

#: the program a user writes; ``{library}`` is ``streamspark`` or ``quixstreams``, ``{reading}``
#: the :data:`READING` schema
APP = """\
import os

from {library} import Application
from {library}.dataframe.windows import Count, Mean

WORKLOAD = os.environ["BENCH_WORKLOAD"]


def count(value, state):
    n = state.get("n", 0) + 1
    state.set("n", n)
    return {{**value, "n": n}}


def sensor_key(row):
    return row["sensor"]


def row_ts(row):
    return int(row["ts"])


app = Application(
    broker_address=os.environ["BENCH_BROKER"],
    consumer_group=os.environ["BENCH_GROUP"],
    auto_offset_reset="earliest",
    # the embedded test broker answers a fetch with whole partition tails (a real broker honours
    # the fetch limits): both libraries get the same room for that answer
    consumer_extra_config={{"receive.message.max.bytes": 1_000_000_000}},
)
if WORKLOAD == "W1-avro":
    from {library}.models.serializers.avro import AvroDeserializer, AvroSerializer

    READING = {reading}
    HOT = {{**READING, "name": "HotReading",
           "fields": READING["fields"] + [{{"name": "temp_f", "type": "double"}}, {{"name": "tag", "type": "string"}}]}}
    source = app.topic(os.environ["BENCH_SRC"], value_deserializer=AvroDeserializer(READING))
    output = app.topic(os.environ["BENCH_OUT"], value_serializer=AvroSerializer(HOT))
elif WORKLOAD == "W1-csv":
    from {library}.sources import CSVSource

    # named functions, not lambdas: Quix Streams pickles the source for its process by reference
    source = CSVSource(os.environ["BENCH_SRC"], name=os.environ["BENCH_GROUP"],
                       key_extractor=sensor_key, timestamp_extractor=row_ts)
    output = app.topic(os.environ["BENCH_OUT"])
else:
    source = app.topic(os.environ["BENCH_SRC"],
                       timestamp_extractor=(lambda v, h, t, tt: v["ts"]) if WORKLOAD == "W3" else None)
    output = app.topic(os.environ["BENCH_OUT"])
if WORKLOAD == "W1-csv":
    sdf = app.dataframe(source=source)
    sdf = sdf.apply(lambda row: {{**row, "id": int(row["id"]), "temp": float(row["temp"]),
                                 "hum": float(row["hum"]), "ts": int(row["ts"])}})
else:
    sdf = app.dataframe(source)
if WORKLOAD in ("W1", "W1-avro", "W1-csv", "W5"):
    sdf = sdf[sdf["temp"] > 25]
    sdf["temp_f"] = sdf["temp"] * 9 / 5 + 32
    sdf = sdf.apply(lambda v: {{**v, "tag": "hot"}})
elif WORKLOAD in ("W2", "W5-stateful"):
    sdf = sdf.apply(count, stateful=True)
elif WORKLOAD == "W3":
    sdf = sdf.tumbling_window(10_000).agg(avg=Mean("temp"), n=Count()).final()
elif WORKLOAD == "W6":
    sdf = sdf.group_by(lambda v: v["sensor"][-2:], name="sensor_suffix")
    sdf = sdf.apply(count, stateful=True)
elif WORKLOAD == "W7":
    configs = app.dataframe(app.topic(os.environ["BENCH_RIGHT"]))
    sdf = sdf.join_asof(configs, how="left", on_merge="keep-left")
sdf.to_topic(output)

if __name__ == "__main__":
    app.run()
"""


def avro_encoder() -> Callable[[dict[str, Any]], bytes]:
    """Schemaless Avro of :data:`READING`: the bytes both libraries' ``AvroSerializer`` write
    without a Schema Registry."""
    import io

    import fastavro

    schema = fastavro.parse_schema(READING)

    def encode(value: dict[str, Any]) -> bytes:
        buffer = io.BytesIO()
        fastavro.schemaless_writer(buffer, schema, value)
        return buffer.getvalue()

    return encode


def load_configs(address: str, topic: str, readings: int, ts0: int) -> int:
    """The device configs W7 joins the readings with: one per 100 readings, in 4 partitions as
    the readings. Returns how many were written.

    Config ``j`` carries ``version`` ``j`` and is written 1 ms before reading
    ``i = 100 * j + (j // 100) % 25``, keyed by that reading's sensor: 2,500 sensors get two
    configs each, 250k readings apart, and each config enriches its reading ``i`` and the
    sensor's later readings until the next config. Readings and configs carry their ``ts`` as
    their Kafka timestamp (``load(..., ts0=ts0, timestamped=True)``, reading ``i`` at
    ``ts0 + i``). The configs share the readings'
    ``sensor`` and ``ts`` fields, which ``on_merge="keep-left"`` leaves as the reading's.

    >>> [(j, 100 * j + (j // 100) % 25) for j in (0, 1, 100, 2500)]
    [(0, 0), (1, 100), (100, 10001), (2500, 250000)]
    """
    from confluent_kafka import Producer

    p = Producer({"bootstrap.servers": address, "linger.ms": 50})
    n = readings // 100
    for j in range(n):
        i = 100 * j + (j // 100) % 25
        sensor = f"sensor-{i % 10000:05d}"
        ts = ts0 + i - 1
        value = {"sensor": sensor, "version": j, "model": f"model-{j % 13}", "threshold": 20.0 + j % 30, "ts": ts}
        p.produce(topic, key=sensor.encode(), value=json.dumps(value).encode(), partition=i % 4, timestamp=ts)
        p.poll(0)
    p.flush()
    return n


def expected_versions(readings: int) -> dict[int, Optional[int]]:
    """Per reading ``id``, the ``version`` W7's as-of join gives it (None: no config yet).

    >>> v = expected_versions(20_000)
    >>> v[0], v[1], v[10_000], v[10_001], v[19_999]
    (0, None, 0, 100, None)
    """
    configs = sorted((100 * j + (j // 100) % 25, j) for j in range(readings // 100))
    result: dict[int, Optional[int]] = {}
    current: dict[int, int] = {}
    k = 0
    for i in range(readings):
        while k < len(configs) and configs[k][0] <= i:
            current[configs[k][0] % 10000] = configs[k][1]
            k += 1
        result[i] = current.get(i % 10000)
    return result


def write_csv(path: Path, n: int, ts0: int) -> None:
    """``n`` readings as ``bench/run.py`` writes them to a topic (the same values), as the rows of
    a CSV file with a header; reading ``i`` has ``ts`` ``ts0 + i``."""
    rnd = random.Random(1)
    with open(path, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["id", "sensor", "temp", "hum", "site", "ts"])
        for i in range(n):
            writer.writerow(
                [
                    i,
                    f"sensor-{i % 10000:05d}",
                    round(rnd.uniform(0, 50), 3),
                    round(rnd.uniform(0, 100), 3),
                    "plant-north-7",
                    ts0 + i,
                ]
            )


def launch(
    python: str, library: str, workload: str, address: str, src: str, out: str, right: str = ""
) -> tuple[Path, dict[str, str], Any, subprocess.Popen, float]:
    """Write the program for ``library`` to a fresh directory and start ``python app.py`` there.

    :return: the directory, the program's environment, its open log, the process and the
        monotonic launch time.
    """
    work = Path(tempfile.mkdtemp(prefix=f"bench-user-{library}-"))
    (work / "app.py").write_text(APP.format(library=library, reading=READING))
    env = {
        **os.environ,
        "BENCH_WORKLOAD": workload,
        "BENCH_BROKER": address,
        "BENCH_SRC": src,
        "BENCH_OUT": out,
        "BENCH_RIGHT": right,
        "BENCH_GROUP": f"user-{library}-{uuid.uuid4().hex[:6]}",
    }
    log = open(work / "app.log", "wb")
    started = time.monotonic()
    proc = subprocess.Popen([python, "app.py"], cwd=work, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    return work, env, log, proc, started


def stop_program(proc: subprocess.Popen, workload: str, library: str, work: Path) -> None:
    """SIGTERM the program (SIGKILL after 60 s), or say that it ended on its own."""
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(60)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    else:
        print(
            f"{workload} {library}: the program exited with {proc.returncode} on its own; its log is {work / 'app.log'}",
            file=sys.stderr,
        )


def delete_topics_of(address: str, group: str, run: str) -> list[str]:
    """Delete the topics a program of consumer group ``group`` created for itself (Quix
    Streams' changelog and repartition topics, a source's topic), whose names contain the
    group, and say which under the name of the ``run``. The embedded broker rewrites its whole
    store after every change, so topics left behind would slow down the runs after this one."""
    admin = AdminClient({"bootstrap.servers": address})
    names = [name for name in admin.list_topics(timeout=10).topics if group in name]
    deleted = []
    for name, fut in admin.delete_topics(names).items() if names else ():
        try:
            fut.result(30)
            deleted.append(name)
        except Exception as exc:  # already gone, or the broker refused: the run goes on
            print(f"could not delete topic {name}: {exc}", file=sys.stderr)
    print(f"{run}: deleted its topics {deleted}", file=sys.stderr)
    return deleted


#: the workloads measured for latency at a fixed rate, not for throughput over a backlog
LATENCY_WORKLOADS = ("W5", "W5-stateful")

#: W5 in this mode: messages per second, seconds of load, and the seconds from launch after
#: which sent messages count (start-up and the backlog it leaves are not latency)
LATENCY_RATE, LATENCY_SECONDS, LATENCY_WARMUP = 5000, 60.0, 30.0


def run_latency(python: str, library: str, workload: str, address: str, src: str, out: str) -> dict[str, Any]:
    """W5 / W5-stateful: ``python app.py`` started while a producer sends a fixed 5k msg/s for
    :data:`LATENCY_SECONDS` into ``src``; p50/p99 of (arrival on ``out`` - send time) of the
    messages sent after :data:`LATENCY_WARMUP` seconds."""
    probe = LatencyProbe(address, src, out, LATENCY_RATE, LATENCY_SECONDS, LATENCY_WARMUP)
    work, env, log, proc, _ = launch(python, library, workload, address, src, out)
    probe.start()
    with PeakRSS(proc.pid) as mem:
        probe.done_producing.wait()
        stats = probe.stop(settle=3.0)
        stop_program(proc, workload, library, work)
    log.close()
    outputs = count_and_delete(address, out)
    count_and_delete(address, src)
    delete_topics_of(address, env["BENCH_GROUP"], f"{workload} {library}")
    return {
        "workload": workload,
        "system": library,
        "outputs": outputs,
        "sent": probe.sent,
        "peak_mb": round(mem.peak_mb),
        "peak_pss_mb": round(mem.peak_pss_mb),
        "peak_by_process": mem.peak_by_process,
        "log": str(work / "app.log"),
        **{k: round(v, 1) if isinstance(v, float) else v for k, v in stats.items()},
    }


def run_program(
    python: str,
    library: str,
    workload: str,
    address: str,
    src: str,
    out: str,
    idle: float,
    limit: float,
    right: str = "",
    values: Optional[list[bytes]] = None,
) -> dict[str, Any]:
    """Write the program for ``library``, run it with ``python app.py`` and time its outputs on
    the (empty) topic ``out``, which the run deletes.

    ``right`` is the topic of W7's right side; with ``values`` the outputs' values are added to it.
    """
    work, env, log, proc, started = launch(python, library, workload, address, src, out, right)
    clock = WatermarkClock(address, out, started)
    with PeakRSS(proc.pid) as mem:
        while proc.poll() is None and time.monotonic() - started < limit:
            time.sleep(0.5)
            last = clock.last_arrival
            if last is not None and time.monotonic() - started - last > idle:
                break
        stop_program(proc, workload, library, work)
    clock.stop()
    log.close()
    arrivals = clock.arrivals()
    if clock.failed_polls:
        print(f"{workload} {library}: {clock.failed_polls} polls of the clock failed ({clock.last_error})", file=sys.stderr)
    if values is not None:
        values.extend(value for _, _, value in read_topic(address, out))
    count_and_delete(address, out)
    row: dict[str, Any] = {
        "workload": workload,
        "system": library,
        "outputs": len(arrivals),
        "peak_mb": round(mem.peak_mb),
        "peak_pss_mb": round(mem.peak_pss_mb),
        "peak_by_process": mem.peak_by_process,
        "log": str(work / "app.log"),
    }
    if workload == "W1-csv":  # the source's topic (its default: source__<name>) goes too
        row["rows_in"] = count_and_delete(address, f"source__{env['BENCH_GROUP']}")
    delete_topics_of(address, env["BENCH_GROUP"], f"{workload} {library}")
    if not arrivals:
        print(f"{workload} {library}: no output; the program's log is {work / 'app.log'}", file=sys.stderr)
        return row
    lo, hi = arrivals[len(arrivals) // 10], arrivals[min(len(arrivals) - 1, len(arrivals) * 9 // 10)]
    steady = (len(arrivals) * 8 // 10) / (hi - lo) if hi > lo else float("inf")
    row.update(first_output_s=round(arrivals[0], 2), last_output_s=round(arrivals[-1], 2), steady_out_per_s=round(steady))
    row["outputs_per_250ms"] = timeline(arrivals, 0.25)
    if library == "streamspark":
        rate = batch_rate((work / "app.log").read_text(errors="replace"), len(arrivals))
        if rate is not None:
            row["batch_out_per_s"] = round(rate)
    if row.get("rows_in") and steady != float("inf"):
        row["steady_rows_in_per_s"] = round(steady * row["rows_in"] / len(arrivals))
    return row


def timeline(arrivals: list[float], step: float) -> list[int]:
    """How many of the (ascending) ``arrivals`` fell in each ``step`` seconds from launch.

    >>> timeline([0.1, 0.2, 0.6], 0.25)
    [2, 0, 1]
    """
    counts = [0] * (int(arrivals[-1] / step) + 1) if arrivals else []
    for t in arrivals:
        counts[int(t / step)] += 1
    return counts


def check_join(outputs: dict[str, list[bytes]], readings: int, examples: int = 5) -> dict[str, Any]:
    """W7's joins checked: per library, its outputs against one per reading with the
    :func:`expected_versions`; between libraries, the ``version`` each gave every reading.

    >>> good = [json.dumps({"id": i, "version": v}).encode() for i, v in expected_versions(200).items()]
    >>> late = [json.dumps({"id": i}).encode() for i in range(200)]
    >>> r = check_join({"quixstreams": good, "streamspark": late}, 200)
    >>> r["quixstreams"]["wrong_version"], r["streamspark"]["wrong_version"], r["disagreements"]
    (0, 2, 2)
    >>> r["examples"][0]
    {'id': 0, 'quixstreams': 0, 'streamspark': None, 'expected': 0}
    """
    expected = expected_versions(readings)
    versions: dict[str, dict[int, Optional[int]]] = {}
    result: dict[str, Any] = {}
    for library, values in outputs.items():
        got: dict[int, Optional[int]] = {}
        duplicates = 0
        for raw in values:
            value = json.loads(raw)
            if value["id"] in got:
                duplicates += 1
            got[value["id"]] = value.get("version")
        wrong = [i for i, v in got.items() if expected.get(i) != v]
        result[library] = {
            "outputs": len(values),
            "readings_out": len(got),
            "duplicates": duplicates,
            "missing": readings - len(got),
            "wrong_version": len(wrong),
            "enriched": sum(v is not None for v in got.values()),
        }
        versions[library] = got
    if len(versions) == 2:
        (a, va), (b, vb) = versions.items()
        differ = sorted(i for i in va.keys() & vb.keys() if va[i] != vb[i])
        result["disagreements"] = len(differ)
        result["examples"] = [{"id": i, a: va[i], b: vb[i], "expected": expected.get(i)} for i in differ[:examples]]
    return result


STOP_LINE = re.compile(r"Stopped after \d+ batch\(es\): \d+ in, (\d+) out, ([0-9.]+)s in micro-batches with data")


def batch_rate(log: str, outputs: int) -> Optional[float]:
    """Outputs per second of a streamspark program's micro-batches, from the line its log ends
    with (``Stopped after 2 batch(es): 505000 in, 500000 out, 5.00s in micro-batches with
    records``); None without that line or when its outputs are not all ``outputs``.

    >>> batch_rate("... Stopped after 2 batch(es): 505000 in, 500000 out, 5.00s in micro-batches with data", 500000)
    100000.0
    >>> batch_rate("... Stopped after 2 batch(es): 505000 in, 500000 out, 5.00s in micro-batches with data", 499999) is None
    True
    """
    found = STOP_LINE.findall(log)
    if not found:
        return None
    logged, seconds = int(found[-1][0]), float(found[-1][1])
    if logged != outputs or seconds <= 0:
        return None
    return outputs / seconds


def ratios(rows: list[dict[str, Any]]) -> dict[str, dict[str, Optional[float]]]:
    """Per workload, streamspark against Quix Streams (see the module's docstring).

    >>> ratios([{"workload": "W1", "system": "quixstreams", "first_output_s": 2.0, "last_output_s": 30.0,
    ...          "steady_out_per_s": 20000},
    ...         {"workload": "W1", "system": "streamspark", "first_output_s": 8.0, "last_output_s": 15.0,
    ...          "steady_out_per_s": 80000}])
    {'W1': {'ratio_to_quix_steady': 4.0, 'ratio_to_quix_last_output': 2.0, 'ratio_to_quix_first_output': 0.25}}
    >>> ratios([{"workload": "W2", "system": "quixstreams", "first_output_s": 2.0, "last_output_s": 10.0,
    ...          "steady_out_per_s": 50000},
    ...         {"workload": "W2", "system": "streamspark", "first_output_s": 6.0, "last_output_s": 8.0,
    ...          "steady_out_per_s": 400000, "batch_out_per_s": 100000}])["W2"]["ratio_to_quix_batch_rate"]
    2.0
    """
    by = {(r["workload"], r["system"]): r for r in rows}
    result: dict[str, dict[str, Optional[float]]] = {}
    for workload in dict.fromkeys(r["workload"] for r in rows):
        quix, ours = by.get((workload, "quixstreams")), by.get((workload, "streamspark"))
        if quix is None or ours is None or "steady_out_per_s" not in quix or "steady_out_per_s" not in ours:
            continue
        result[workload] = {
            "ratio_to_quix_steady": round(ours["steady_out_per_s"] / quix["steady_out_per_s"], 2),
            "ratio_to_quix_last_output": round(quix["last_output_s"] / ours["last_output_s"], 2),
            "ratio_to_quix_first_output": round(quix["first_output_s"] / ours["first_output_s"], 2),
        }
        if "batch_out_per_s" in ours:
            result[workload]["ratio_to_quix_batch_rate"] = round(ours["batch_out_per_s"] / quix["steady_out_per_s"], 2)
    return result


def input_format(workload: str) -> str:
    """The input a throughput workload reads: ``json`` readings (shared by W1, W2, W3 and W6),
    ``avro``, ``timestamped`` (W7, with its config topic) or a ``csv`` file."""
    return {"W1-avro": "avro", "W7": "timestamped", "W1-csv": "csv"}.get(workload, "json")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--messages", type=int, default=500_000)
    parser.add_argument("--workloads", default="W1,W2,W3,W6")
    parser.add_argument("--no-quix", action="store_true")
    parser.add_argument("--idle", type=float, default=15.0, help="seconds without output that end a run")
    parser.add_argument("--limit", type=float, default=600.0, help="seconds a run may take at most")
    parser.add_argument("--json", default=str(Path(__file__).with_name("results") / "latest.json"))
    parser.add_argument("--broker-nice", type=int, default=10)
    args = parser.parse_args()
    from streamspark.testing import EmbeddedBroker

    systems = [("streamspark", sys.executable)]
    if not args.no_quix:
        systems.insert(0, ("quixstreams", install_quix()))
    rows: list[dict[str, Any]] = []
    checks: dict[str, Any] = {}
    loop_before = cpu_loop_seconds()
    with EmbeddedBroker(nice=args.broker_nice) as broker:
        sources: dict[str, str] = {}  # value format -> input topic, loaded once
        configs = ""  # W7's right topic, written before its readings
        workloads = args.workloads.split(",")
        # the embedded broker rewrites its whole store after every change, so the topics of
        # inputs that no later workload reads are deleted: they would slow down later runs
        last_use = {input_format(w): i for i, w in enumerate(workloads) if w not in LATENCY_WORKLOADS}
        for index, workload in enumerate(workloads):
            if workload in LATENCY_WORKLOADS:
                for library, python in systems:
                    # the broker rewrites its store after creating a topic: done before launch
                    src, out = make_topic(broker.address), make_topic(broker.address)
                    wait_broker_quiet(broker)
                    row = run_latency(python, library, workload, broker.address, src, out)
                    rows.append(row)
                    print(json.dumps(row), flush=True)
                continue
            fmt = input_format(workload)
            if fmt == "csv" and fmt not in sources:  # event time in the last minutes: kept by the broker
                sources[fmt] = str(Path(tempfile.mkdtemp(prefix="bench-user-csv-")) / "readings.csv")
                write_csv(Path(sources[fmt]), args.messages, ts0=int(time.time() * 1000) - args.messages)
            if fmt not in sources:
                sources[fmt] = make_topic(broker.address)
                options: dict[str, Any] = {"encode": avro_encoder()} if fmt == "avro" else {}
                # event time in the last minutes: W3's outputs carry their window's start as
                # Kafka timestamp, and the broker deletes messages older than its retention
                options["ts0"] = int(time.time() * 1000) - args.messages
                if fmt == "timestamped":  # event time = Kafka timestamp
                    options.update(timestamped=True)
                    configs = make_topic(broker.address)
                    load_configs(broker.address, configs, args.messages, options["ts0"])
                load(broker.address, sources[fmt], args.messages, **options)
            outputs: dict[str, list[bytes]] = {}
            for library, python in systems:
                # the broker rewrites its whole store after creating a topic (~0.9 CPU-s with a
                # 500k-message input): done before launch, not during the program's start
                out = make_topic(broker.address)
                wait_broker_quiet(broker)
                values: Optional[list[bytes]] = [] if workload == "W7" else None
                row = run_program(
                    python,
                    library,
                    workload,
                    broker.address,
                    sources[fmt],
                    out,
                    args.idle,
                    args.limit,
                    right=configs,
                    values=values,
                )
                rows.append(row)
                print(json.dumps(row), flush=True)
                if values is not None:
                    outputs[library] = values
            if outputs:
                checks[workload] = check_join(outputs, args.messages)
                print(workload, json.dumps(checks[workload]), flush=True)
            if last_use[fmt] == index and fmt != "csv":
                count_and_delete(broker.address, sources.pop(fmt))
                if fmt == "timestamped":
                    count_and_delete(broker.address, configs)
    result = {
        "mode": "user",
        "messages": args.messages,
        "machine": f"{os.cpu_count()} cores",
        # a 10M-addition Python loop before and after the run, in seconds: the machine's speed
        "cpu_loop_s": [loop_before, cpu_loop_seconds()],
        "rows": rows,
        "ratios": ratios(rows),
        "checks": checks,
    }
    Path(args.json).parent.mkdir(parents=True, exist_ok=True)
    Path(args.json).write_text(json.dumps(result, indent=2) + "\n")
    for workload, r in result["ratios"].items():
        print(workload, r)
    return 0


if __name__ == "__main__":
    sys.exit(main())
