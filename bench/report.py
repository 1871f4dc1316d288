"""Turn the JSON of a bench run into the Markdown tables of ``docs/benchmarks.md``.

Usage::

    .venv/bin/python bench/run.py --messages 1000000 --json out.json
    .venv/bin/python bench/report.py out.json --machine "2 cores, 24 GiB" > results.md

``bench/user.py``'s result (``bench/results/latest.json``) gives its own tables
(:func:`user_tables`). The input of the others is the list that ``bench/run.py --json`` writes: one object per (workload, system)
with ``workload``, ``system``, ``seconds``, ``outputs``, ``peak_mb``, ``msg_per_s``,
``ratio_to_quix`` and ``ratio_to_limit`` (``null`` where there is nothing to compare), and
for W5 ``p50_ms``, ``p99_ms`` and ``measured``. The output is the throughput table (W1-W4)
and the latency table (W5); paste it into the "Latest results" section of the page.

>>> rows = [
...     {"workload": "W1", "system": "confluent-kafka loop", "seconds": 5.0, "outputs": 1, "peak_mb": 150,
...      "msg_per_s": 200000.0, "ratio_to_quix": None, "ratio_to_limit": 1.0},
...     {"workload": "W1", "system": "quixstreams", "seconds": 40.0, "outputs": 1, "peak_mb": 140,
...      "msg_per_s": 25000.0, "ratio_to_quix": 1.0, "ratio_to_limit": 0.125},
...     {"workload": "W1", "system": "streamspark", "seconds": 10.0, "outputs": 1, "peak_mb": 1638.4,
...      "msg_per_s": 100000.0, "ratio_to_quix": 4.0, "ratio_to_limit": 0.5},
... ]
>>> print(throughput_table(rows))
| workload | loop | Quix Streams | streamspark | vs Quix | vs loop | streamspark peak memory |
|---|---|---|---|---|---|---|
| W1 stateless → to_topic | 200k | 25k | **100k** | **4.00×** | 0.50 | 1.6 GB |
>>> messages(rows)
1000000
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, Optional, Sequence

__all__ = ("throughput_table", "latency_table", "user_tables", "messages", "render", "main")

LOOP, QUIX, STREAMSPARK = "confluent-kafka loop", "quixstreams", "streamspark"

#: how each workload is named in the table
LABELS = {
    "W1": "W1 stateless → to_topic",
    "W2": "W2 running count per key",
    "W3": "W3 10 s tumbling window, final",
    "W4": "W4 data lake",
}
#: what the loop and Quix Streams write in W4 (neither writes what the lake sink writes)
W4_NOTES = {LOOP: "hour-partitioned Parquet", QUIX: "Parquet file sink"}


def rate(msg_per_s: Optional[float]) -> str:
    """Messages per second in thousands, three significant digits, trailing zeros dropped.

    >>> rate(207_900.0), rate(61_712.0), rate(5_500.0), rate(96_000.0), rate(None)
    ('208k', '61.7k', '5.5k', '96k', '—')
    """
    if msg_per_s is None:
        return "—"
    k = msg_per_s / 1000
    digits = 0 if k >= 100 else 1 if k >= 10 else 2
    text = f"{k:.{digits}f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return f"{text}k"


def _find(rows: Sequence[dict[str, Any]], workload: str, system: str) -> Optional[dict[str, Any]]:
    for row in rows:
        if row.get("workload") == workload and row.get("system") == system:
            return row
    return None


def messages(rows: Sequence[dict[str, Any]]) -> Optional[int]:
    """The input size of the run (each W1-W4 row ran over all of it), or None."""
    for row in rows:
        if row.get("workload") != "W5" and row.get("seconds"):
            return int(round(row["msg_per_s"] * row["seconds"]))
    return None


def throughput_table(rows: Sequence[dict[str, Any]]) -> str:
    """The W1-W4 table: msg/s of each system, streamspark's ratios and its peak memory."""
    lines = [
        "| workload | loop | Quix Streams | streamspark | vs Quix | vs loop | streamspark peak memory |",
        "|---|---|---|---|---|---|---|",
    ]
    for workload, label in LABELS.items():
        ours = _find(rows, workload, STREAMSPARK)
        if ours is None:
            continue
        cells = []
        for system in (LOOP, QUIX):
            row = _find(rows, workload, system)
            cell = rate(row["msg_per_s"]) if row is not None else "—"
            if row is not None and workload == "W4":
                cell += f" ({W4_NOTES[system]})"
            cells.append(cell)
        vs_quix = ours.get("ratio_to_quix")
        vs_loop = ours.get("ratio_to_limit")
        peak = ours.get("peak_mb")
        lines.append(
            f"| {label} | {cells[0]} | {cells[1]} | **{rate(ours['msg_per_s'])}** | "
            f"{f'**{vs_quix:.2f}×**' if vs_quix is not None else '—'} | "
            f"{f'{vs_loop:.2f}' if vs_loop is not None else '—'} | "
            f"{f'{peak / 1024:.1f} GB' if peak else '—'} |"
        )
    return "\n".join(lines)


def latency_table(rows: Sequence[dict[str, Any]]) -> str:
    """The W5 table: p50 and p99 latency of each system, or "" without W5 rows.

    >>> print(latency_table([{"workload": "W5", "system": "streamspark", "p50_ms": 438.2, "p99_ms": 897.0}]))
    | system | p50 | p99 |
    |---|---|---|
    | streamspark | 438 ms | 897 ms |
    """
    names = {LOOP: "confluent-kafka loop", QUIX: "Quix Streams", STREAMSPARK: "streamspark"}
    lines = ["| system | p50 | p99 |", "|---|---|---|"]
    for system, name in names.items():
        row = _find(rows, "W5", system)
        if row is None:
            continue
        lines.append(f"| {name} | {row['p50_ms']:,.0f} ms | {row['p99_ms']:,.0f} ms |")
    return "\n".join(lines) if len(lines) > 2 else ""


def render(rows: Sequence[dict[str, Any]], machine: str = "") -> str:
    """Both tables with a line saying what was measured."""
    n = messages(rows)
    about = ", ".join(part for part in (f"{n:,} messages" if n else "", machine, "one run") if part)
    parts = [f"Measured: {about}.", "", throughput_table(rows)]
    latency = latency_table(rows)
    if latency:
        parts += ["", "W5, latency at a fixed 5k msg/s (W1 pipeline):", "", latency]
    return "\n".join(parts) + "\n"


#: how each workload of ``bench/user.py`` is named in its tables
USER_LABELS = {
    "W1": "W1 stateless → topic",
    "W2": "W2 running count → topic",
    "W3": "W3 10 s tumbling window `.final()`",
    "W6": "W6 `group_by` + running count",
    "W1-avro": "W1-avro: W1 with Avro values in and out",
    "W7": "W7 `join_asof` with a config topic",
    "W1-csv": "W1-csv: `CSVSource` → W1 → topic",
    "W5": "W5 stateless (W1) at 5k msg/s",
    "W5-stateful": "W5-stateful (W2) at 5k msg/s",
}


def _gb(mb: Optional[float]) -> str:
    return "—" if mb is None else f"{mb / 1024:.2f} GB"


def user_tables(result: dict[str, Any]) -> str:
    """The tables of a ``bench/user.py`` result: a backlog table (time to the first and the
    last output, steady outputs/s, the ratios, peak memory as proportional set size) and, when
    it has W5 rows, a latency table.

    >>> rows = [
    ...     {"workload": "W2", "system": "quixstreams", "first_output_s": 2.3, "last_output_s": 10.7,
    ...      "steady_out_per_s": 61522, "peak_pss_mb": 327},
    ...     {"workload": "W2", "system": "streamspark", "first_output_s": 9.5, "last_output_s": 16.0,
    ...      "steady_out_per_s": 132458, "batch_out_per_s": 110000, "peak_pss_mb": 1731},
    ...     {"workload": "W5", "system": "quixstreams", "p50_ms": 36.0, "p99_ms": 97.2, "peak_pss_mb": 74},
    ...     {"workload": "W5", "system": "streamspark", "p50_ms": 255.7, "p99_ms": 729.6, "peak_pss_mb": 1228},
    ... ]
    >>> print(user_tables({"rows": rows}))
    | workload | Quix Streams: first / last output, steady out/s | streamspark | steady × Quix | micro-batch rate × Quix | last output (Quix ÷ streamspark) | peak memory, Quix / streamspark |
    |---|---|---|---|---|---|---|
    | W2 running count → topic | 2.3 s / 10.7 s, 61.5k | 9.5 s / 16.0 s, 132k | **2.15** | 1.79 (110k) | 0.67 | 0.32 GB / 1.69 GB |
    <BLANKLINE>
    | workload | Quix Streams p50 / p99 | streamspark p50 / p99 | peak memory, Quix / streamspark |
    |---|---|---|---|
    | W5 stateless (W1) at 5k msg/s | 36 / 97 ms | 256 / 730 ms | 0.07 GB / 1.20 GB |
    """
    rows = result["rows"]
    workloads = list(dict.fromkeys(r["workload"] for r in rows))

    def cell(row: Optional[dict[str, Any]]) -> str:
        if row is None or "first_output_s" not in row:
            return "—"
        return f"{row['first_output_s']:.1f} s / {row['last_output_s']:.1f} s, {rate(row['steady_out_per_s'])}"

    backlog = [
        "| workload | Quix Streams: first / last output, steady out/s | streamspark | steady × Quix "
        "| micro-batch rate × Quix | last output (Quix ÷ streamspark) | peak memory, Quix / streamspark |",
        "|---|---|---|---|---|---|---|",
    ]
    latency = [
        "| workload | Quix Streams p50 / p99 | streamspark p50 / p99 | peak memory, Quix / streamspark |",
        "|---|---|---|---|",
    ]
    for workload in workloads:
        quix, ours = _find(rows, workload, QUIX), _find(rows, workload, STREAMSPARK)
        memory = f"{_gb((quix or {}).get('peak_pss_mb'))} / {_gb((ours or {}).get('peak_pss_mb'))}"
        label = USER_LABELS.get(workload, workload)
        if ours is not None and "p50_ms" in ours:

            def lat(row: Optional[dict[str, Any]]) -> str:
                return "—" if row is None else f"{row['p50_ms']:.0f} / {row['p99_ms']:.0f} ms"

            latency.append(f"| {label} | {lat(quix)} | {lat(ours)} | {memory} |")
            continue
        steady = batch = last = "—"
        if quix is not None and ours is not None and "steady_out_per_s" in quix and "steady_out_per_s" in ours:
            steady = f"**{ours['steady_out_per_s'] / quix['steady_out_per_s']:.2f}**"
            last = f"{quix['last_output_s'] / ours['last_output_s']:.2f}"
            if "batch_out_per_s" in ours:
                batch = f"{ours['batch_out_per_s'] / quix['steady_out_per_s']:.2f} ({rate(ours['batch_out_per_s'])})"
        backlog.append(f"| {label} | {cell(quix)} | {cell(ours)} | {steady} | {batch} | {last} | {memory} |")
    parts = ["\n".join(backlog)] if len(backlog) > 2 else []
    if len(latency) > 2:
        parts.append("\n".join(latency))
    return "\n\n".join(parts)


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description="Markdown tables from a bench/run.py or bench/user.py JSON file")
    parser.add_argument("json_file", help="the file bench/run.py --json or bench/user.py wrote")
    parser.add_argument("--machine", default="", help='what it ran on, e.g. "2 cores, 24 GiB"')
    args = parser.parse_args(argv)
    with open(args.json_file) as f:
        data = json.load(f)
    if isinstance(data, dict) and data.get("mode") == "user":
        sys.stdout.write(user_tables(data) + "\n")
    else:
        sys.stdout.write(render(data, args.machine))
    return 0


if __name__ == "__main__":
    sys.exit(main())
