"""Measuring helpers of the benchmark: peak memory of a process tree, a quiet broker before
each run, arrival times of a topic's messages, W5 latency probes, and how fast the machine is."""

from __future__ import annotations

import json
import os
import random
import threading
import time
import uuid
from bisect import bisect_right
from pathlib import Path
from typing import Callable, Iterable, Optional

_PAGE = os.sysconf("SC_PAGE_SIZE")


def cpu_loop_seconds(additions: int = 10_000_000) -> float:
    """Seconds a pure-Python loop of ``additions`` additions takes on one core: how fast the
    machine is at the time of a run (the same 2-core machine has varied by a third from hour to
    hour), to read a run's figures against another's.

    >>> 0 <= cpu_loop_seconds(1000) < 1
    True
    """
    # at module level, as the figures in docs/benchmarks.md were taken (global names: slower
    # than a function's locals)
    code = compile("total = 0\nfor i in range(additions):\n    total += i\n", "<loop>", "exec")
    started = time.perf_counter()
    exec(code, {"additions": additions})
    return round(time.perf_counter() - started, 3)


def _parent(pid: int) -> int:
    """The parent of ``pid`` (0: none, or it is gone)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return int(f.read().rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return 0


def _children() -> dict[int, list[int]]:
    tree: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            ppid = _parent(int(name))
            if ppid:
                tree.setdefault(ppid, []).append(int(name))
    return tree


def _rss(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/statm") as f:
            return int(f.read().split()[1]) * _PAGE
    except (OSError, IndexError, ValueError):
        return 0


def _pss(pid: int) -> int:
    """Proportional set size: resident memory with each page shared by n processes (a fork's
    copy-on-write pages) counted 1/n in each."""
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                if line.startswith("Pss:"):
                    return int(line.split()[1]) * 1024
    except (OSError, IndexError, ValueError):
        pass
    return 0


def process_label(pid: int) -> str:
    """What ``pid`` runs, in a few words: ``java``, ``python -m pyspark.daemon``, ``python app.py``.

    >>> process_label(os.getpid()).startswith("python")
    True
    """
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            args = [a.decode(errors="replace") for a in f.read().split(b"\0") if a]
    except OSError:
        return "?"
    if not args:
        return "?"
    program = os.path.basename(args[0])
    if program.startswith("python"):
        rest = args[1:]
        if rest[:2] == ["-m", "streamspark.engine.fork_server"] and len(rest) > 2:
            return _served_label(pid, rest[2])
        if rest[:1] == ["-m"] and len(rest) > 1:
            return f"python -m {rest[1]}" + (f" {rest[2]}" if len(rest) > 2 else "")
        return " ".join(["python", *(os.path.basename(a) for a in rest[:1])])
    return program


def _served_label(pid: int, folder: str) -> str:
    """The label of a process showing the fork server's command line (streamspark's engine):
    the server itself, a process it runs for one of Spark's launchers (it lists their
    arguments in ``<folder>/children``), or a process forked by one of those (a task worker)."""
    ancestor, forked = pid, False
    while ancestor > 1:
        try:
            argv = json.loads(Path(folder, "children", str(ancestor)).read_text())
        except (OSError, ValueError):
            ancestor, forked = _parent(ancestor), True
            continue
        label = f"python -m {argv[0]}" + (f" {argv[1]}" if len(argv) > 1 else "")
        return f"{label} (forked)" if forked else label
    return "fork server"


def _kcmp() -> Optional[Callable[[int, int], int]]:
    """``kcmp(pid1, pid2, KCMP_VM)`` (0: the two share one address space), or None off x86-64 Linux."""
    import ctypes
    import platform

    if platform.system() != "Linux" or platform.machine() != "x86_64":
        return None
    libc = ctypes.CDLL(None, use_errno=True)
    return lambda a, b: int(libc.syscall(312, a, b, 1, 0, 0))  # SYS_kcmp, KCMP_VM


_same_vm = _kcmp()


def _shares_parents_memory(pid: int, parent: int) -> bool:
    """True for a child that runs in its parent's address space: a ``vfork``/``posix_spawn``
    child before its ``exec`` (the JVM starts ``chmod`` and ``rm`` so, several times a second),
    whose resident memory is its parent's."""
    return _same_vm is not None and _same_vm(pid, parent) == 0


def _cpu_seconds(pids: list[int]) -> float:
    """CPU time (user + system) of the processes ``pids``."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / tick
        except (OSError, IndexError, ValueError):
            continue
    return total


def wait_broker_quiet(broker, limit: float = 60.0, busy: float = 0.05) -> float:
    """Wait until the embedded ``broker`` uses less than ``busy`` of a core (over 1 s).

    The broker keeps working for seconds after a large write (1M uncompressed messages cost it
    ~8 CPU-seconds after the last one arrived); on a 2-core machine that work would otherwise
    fall into the next system's measurement. Returns the seconds waited.
    """
    pids = broker.server_pids()
    started = time.monotonic()
    last = _cpu_seconds(pids)
    while time.monotonic() - started < limit:
        time.sleep(1.0)
        now = _cpu_seconds(pids)
        if now - last < busy:
            break
        last = now
    return time.monotonic() - started


class PeakRSS:
    """Samples the resident memory of ``pid`` and (with ``tree``) its descendants, leaving out
    the subtrees of ``exclude`` (the broker), every 0.2 s; ``peak_mb`` and ``peak_pss_mb`` when
    done.

    Each address space counts once: a child still running in its parent's (a ``vfork`` or
    ``posix_spawn`` child before its ``exec``) adds nothing. ``peak_mb`` sums resident sets, so
    pages a forked process shares copy-on-write with its parent (Spark's Python workers and
    their daemon) count in each; ``peak_pss_mb`` sums proportional set sizes, which count each
    such page once in all. ``peak_by_process`` holds, for each process at the sample where the
    resident sets' sum peaked, what it runs (:func:`process_label`; a daemon and the workers it
    forked run the same), its pid, its resident set and its proportional set size (MB).
    """

    def __init__(self, pid: Optional[int] = None, tree: bool = True, exclude: Iterable[int] = ()) -> None:
        self.pid = pid or os.getpid()
        self.tree = tree
        self.exclude = set(exclude)
        self.peak = 0
        self.peak_pss = 0
        self.peak_by_process: list[tuple[str, int, float, float]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _pids(self) -> list[int]:
        if not self.tree:
            return [self.pid]
        children = _children()
        found, todo = [], [(self.pid, 0)]
        while todo:
            pid, parent = todo.pop()
            if pid in self.exclude:
                continue
            if not (parent and _shares_parents_memory(pid, parent)):
                found.append(pid)
            todo.extend((child, pid) for child in children.get(pid, ()))
        return found

    def _sample(self) -> None:
        sizes = [(pid, _rss(pid), _pss(pid)) for pid in self._pids()]
        self.peak_pss = max(self.peak_pss, sum(pss for _, _, pss in sizes))
        total = sum(rss for _, rss, _ in sizes)
        if total > self.peak:
            self.peak = total
            self.peak_by_process = sorted(
                ((process_label(pid), pid, round(rss / 2**20, 1), round(pss / 2**20, 1)) for pid, rss, pss in sizes if rss),
                key=lambda row: -row[2],
            )

    def _run(self) -> None:
        while not self._stop.is_set():
            self._sample()
            self._stop.wait(0.2)

    def __enter__(self) -> "PeakRSS":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self._sample()

    @property
    def peak_mb(self) -> float:
        return self.peak / 2**20

    @property
    def peak_pss_mb(self) -> float:
        return self.peak_pss / 2**20


def read_topic(address: str, topic: str, timeout: float = 120.0) -> list[tuple[int, int, Optional[bytes]]]:
    """Every message of ``topic`` up to the high watermarks it has when called, as (partition,
    offset, value); a partition is done once the consumer's position reaches its watermark
    (transaction markers take offsets but are not messages)."""
    from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition

    c = Consumer(
        {
            "bootstrap.servers": address,
            "group.id": f"bench-read-{uuid.uuid4().hex[:6]}",
            "enable.auto.commit": False,
            "receive.message.max.bytes": 1_000_000_000,
        }
    )
    try:
        parts = c.list_topics(topic, timeout=10).topics[topic].partitions
        ends = {p: c.get_watermark_offsets(TopicPartition(topic, p), timeout=10, cached=False)[1] for p in parts}
        todo = {p for p, end in ends.items() if end > 0}
        c.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in todo])
        out: list[tuple[int, int, Optional[bytes]]] = []
        deadline = time.monotonic() + timeout
        while todo and time.monotonic() < deadline:
            msgs = c.consume(10_000, timeout=0.5)
            for m in msgs:
                if m.error():
                    continue
                p, o = m.partition(), m.offset()
                if o < ends[p]:
                    out.append((p, o, m.value()))
                if o + 1 >= ends[p]:
                    todo.discard(p)
            if not msgs and todo:
                positions = c.position([TopicPartition(topic, p) for p in todo])
                todo -= {tp.partition for tp in positions if tp.offset >= ends[tp.partition]}
        if todo:
            raise TimeoutError(f"{topic}: partitions {sorted(todo)} not read to their end in {timeout} s")
        return out
    finally:
        c.close()


class WatermarkClock:
    """Notes when messages arrive in a topic without consuming it while it is written.

    Every ``interval`` seconds it asks the broker for the high watermark of each partition and
    keeps the times at which a watermark moved: a message at offset ``o`` of partition ``p``
    arrived at the first poll that saw the watermark of ``p`` above ``o``. Times are
    ``time.monotonic()`` minus ``started``.

    Why not a consumer: the embedded broker answers a fetch at once when it has nothing, whatever
    ``fetch.wait.max.ms`` says, so a consumer that has caught up fetches in a tight loop. That
    measured 0.47 of a core in the consumer and 0.40 in the broker, taken from the system under
    test on a 2-core machine. Polling the watermarks every 10 ms measured about 0.05.

    >>> clock = WatermarkClock(address, "out", started=time.monotonic())  # doctest: +SKIP
    >>> clock.stop(); len(clock.arrivals()), clock.last_arrival  # doctest: +SKIP
    (250136, 10.2)
    """

    def __init__(self, address: str, topic: str, started: float, interval: float = 0.01) -> None:
        from confluent_kafka import Consumer, TopicPartition

        self.started, self.interval = started, interval
        self._consumer = Consumer({"bootstrap.servers": address, "group.id": f"clock-{uuid.uuid4().hex[:6]}"})
        parts = sorted(self._consumer.list_topics(topic, timeout=10).topics[topic].partitions)
        self._tps = [TopicPartition(topic, p) for p in parts]
        #: per partition: the watermarks seen, ascending, and when each was first seen
        self._marks: dict[int, list[int]] = {p: [0] for p in parts}
        self._times: dict[int, list[float]] = {p: [0.0] for p in parts}
        self.last_arrival: Optional[float] = None
        #: polls the broker did not answer (each retried at the next poll), and the last error
        self.failed_polls = 0
        self.last_error: Optional[Exception] = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            while not self._stop.is_set():
                for tp in self._tps:
                    try:
                        high = self._consumer.get_watermark_offsets(tp, timeout=10, cached=False)[1]
                    except Exception as exc:  # a busy broker: try again at the next poll
                        self.failed_polls += 1
                        self.last_error = exc
                        continue
                    if high > self._marks[tp.partition][-1]:
                        now = time.monotonic() - self.started
                        self._times[tp.partition].append(now)
                        self._marks[tp.partition].append(high)
                        self.last_arrival = now
                self._stop.wait(self.interval)
        finally:
            self._consumer.close()

    def arrival(self, partition: int, offset: int) -> float:
        """When the message at ``offset`` of ``partition`` arrived (it must have)."""
        marks = self._marks[partition]
        i = bisect_right(marks, offset)
        if i == len(marks):
            raise ValueError(f"offset {offset} of partition {partition} has not arrived")
        return self._times[partition][i]

    def arrivals(self) -> list[float]:
        """The arrival time of every offset below the watermarks, ascending."""
        out: list[float] = []
        for p, marks in self._marks.items():
            times = self._times[p]
            for i in range(1, len(marks)):
                out.extend([times[i]] * (marks[i] - marks[i - 1]))
        out.sort()
        return out

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()


class LatencyProbe:
    """W5: produces at a fixed rate (values carry their send time) and notes when each output
    arrives (a :class:`WatermarkClock` polling every 5 ms), recording arrival time - send time
    for the messages sent after the warm-up."""

    def __init__(self, address: str, src: str, out: str, rate: int, seconds: float, warmup: float) -> None:
        self.address, self.src, self.out = address, src, out
        self.rate, self.seconds, self.warmup = rate, seconds, warmup
        self.latencies: list[float] = []
        self.sent = 0
        self.done_producing = threading.Event()

    def start(self) -> None:
        self._t0 = time.time()
        # arrival times in wall-clock seconds, to compare with the send times in the values
        self._clock = WatermarkClock(self.address, self.out, started=time.monotonic() - time.time(), interval=0.005)
        threading.Thread(target=self._produce, daemon=True).start()

    def _produce(self) -> None:
        from confluent_kafka import Producer

        p = Producer({"bootstrap.servers": self.address, "linger.ms": 1})
        rnd = random.Random(5)
        tick = 0.01
        per_tick = max(1, int(self.rate * tick))
        next_at = time.monotonic()
        end = next_at + self.seconds
        i = 0
        while time.monotonic() < end:
            now_ms = time.time() * 1000
            for _ in range(per_tick):
                v = {
                    "id": i,
                    "sensor": f"sensor-{i % 10000:05d}",
                    "temp": round(rnd.uniform(0, 50), 3),
                    "hum": 1.0,
                    "site": "plant-north-7",
                    "ts": int(now_ms),
                    "sent_ms": now_ms,
                }
                p.produce(self.src, key=v["sensor"].encode(), value=json.dumps(v).encode(), partition=i % 4)
                i += 1
            p.poll(0)
            next_at += tick
            time.sleep(max(0.0, next_at - time.monotonic()))
        p.flush()
        self.sent = i
        self.done_producing.set()

    def stop(self, settle: float = 1.0) -> dict[str, float]:
        """Wait ``settle`` seconds for the last outputs, stop the clock, read the output topic
        and return the p50/p99 latency (ms), how many messages were measured, how many measured
        messages arrived only after the clock stopped (``late``, left out) and how many polls of
        the clock failed."""
        time.sleep(settle)
        self._clock.stop()
        measured_from = (self._t0 + self.warmup) * 1000
        self.latencies, late = [], 0
        for partition, offset, value in read_topic(self.address, self.out):
            sent = json.loads(value or b"{}").get("sent_ms")
            if sent is None or sent < measured_from:
                continue
            try:
                received = self._clock.arrival(partition, offset) * 1000
            except ValueError:  # came after the clock stopped
                late += 1
                continue
            self.latencies.append(received - sent)
        lat = sorted(self.latencies)
        stats: dict[str, float] = {"measured": len(lat), "late": late, "failed_polls": self._clock.failed_polls}
        if not lat:
            return {"p50_ms": float("nan"), "p99_ms": float("nan"), **stats}
        return {"p50_ms": lat[len(lat) // 2], "p99_ms": lat[min(len(lat) - 1, int(len(lat) * 0.99))], **stats}
