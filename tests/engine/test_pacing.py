"""When micro-batches start: ``commit_interval`` on Spark (``engine/pacing.py``)."""

from __future__ import annotations

import dataclasses
import time
from datetime import timedelta

import pytest

from streamspark.dataframe.windows import Count
from streamspark.engine.pacing import (
    BATCH_RECORDS,
    LIMITED_RUN_INTERVAL,
    POLL_INTERVAL,
    STREAMED_BATCH_RECORDS,
    flows_as_it_arrives,
    min_batch_interval,
    records_per_batch,
    records_per_partition,
    trigger_interval,
)
from streamspark.sinks.core.list import ListSink
from tests.engine.plans import plan_of


def _topics_only(app, sdf):
    sdf.apply(lambda v: v).to_topic(app.topic("out"))


def _stateful(app, sdf):
    sdf.apply(lambda v, state: v, stateful=True).to_topic(app.topic("out"))


def _with_sink(app, sdf):
    sdf.to_topic(app.topic("out"))
    sdf.sink(ListSink())


def _idle_windows(app, sdf):
    sdf.tumbling_window(1000).agg(n=Count()).final(close_idle_after=timedelta(seconds=5))


@pytest.mark.parametrize("build", [_topics_only, _stateful], ids=["stateless", "stateful"])
def test_topic_outputs_at_least_once_flow_as_records_arrive(build):
    plan = plan_of(build)
    assert flows_as_it_arrives(plan)
    # the query asks for new records every POLL_INTERVAL, whatever the commit interval, and
    # the source holds nothing back
    assert trigger_interval(plan, commit_interval=5.0, limited=False) == POLL_INTERVAL
    assert trigger_interval(plan, commit_interval=60.0, limited=False) == POLL_INTERVAL
    assert min_batch_interval(plan, commit_interval=60.0, limited=False) == 0.0
    # a shorter commit interval than the poll interval is kept
    assert trigger_interval(plan, commit_interval=0.0, limited=False) == 0.0


def test_sinks_and_exactly_once_start_a_micro_batch_per_commit_interval_held_by_the_source():
    for plan in (plan_of(_with_sink), dataclasses.replace(plan_of(_topics_only), eos=object())):
        assert not flows_as_it_arrives(plan)
        # Spark polls often (a backlog is read at once); the source holds records back
        assert trigger_interval(plan, commit_interval=5.0, limited=False) == POLL_INTERVAL
        assert min_batch_interval(plan, commit_interval=5.0, limited=False) == 5.0
        assert min_batch_interval(plan, commit_interval=2.0, limited=False) == 2.0


def test_timers_keep_sparks_trigger_at_the_commit_interval():
    plan = plan_of(_idle_windows)
    assert not flows_as_it_arrives(plan)
    # Spark runs a micro-batch every trigger for the timers: the trigger paces them
    assert trigger_interval(plan, commit_interval=5.0, limited=False) == 5.0
    assert min_batch_interval(plan, commit_interval=5.0, limited=False) == 0.0


def test_runs_with_timeout_or_count_start_a_micro_batch_at_least_every_half_second():
    sink = plan_of(_with_sink)
    assert min_batch_interval(sink, commit_interval=5.0, limited=True) == LIMITED_RUN_INTERVAL == 0.5
    assert min_batch_interval(sink, commit_interval=0.2, limited=True) == 0.2
    assert trigger_interval(plan_of(_idle_windows), commit_interval=5.0, limited=True) == 0.5
    assert trigger_interval(plan_of(_topics_only), commit_interval=5.0, limited=True) == POLL_INTERVAL


@pytest.mark.parametrize("stateful", [False, True], ids=["stateless", "stateful"])
def test_app_run_processes_records_as_they_arrive_not_per_commit_interval(make_app, kafka, stateful):
    """``app.run()`` with no limits and a 60 s ``commit_interval``: three rounds of records,
    each produced once the previous round's outputs arrived, all come out within 40 s each
    (one micro-batch per commit interval would hold rounds 2 and 3 for a minute)."""
    import json
    import threading

    from tests.conftest import json_messages

    src, out = kafka.new_topic(partitions=2), kafka.new_topic()
    group = "flow-" + ("stateful" if stateful else "stateless")
    app = make_app(commit_interval=60.0, consumer_group=group)
    sdf = app.dataframe(app.topic(src))
    if stateful:
        sdf = sdf.apply(lambda v, state: {**v, "seen": state.get("n", 0)}, stateful=True)
    sdf.to_topic(app.topic(out))
    rounds: list[list[int]] = []
    failure: list[BaseException] = []

    def feed() -> None:
        try:
            for r in range(3):
                values = [{"round": r, "i": i} for i in range(4)]
                kafka.produce(src, json_messages(values, key=lambda v: str(v["i"]).encode()))
                got = kafka.consume(out, expected=4 * (r + 1), timeout=40)
                rounds.append(sorted(json.loads(m.value())["round"] for m in got))
        except BaseException as exc:  # reported by the test's thread
            failure.append(exc)
        finally:
            app.stop()

    feeder = threading.Thread(target=feed)
    feeder.start()
    app.run()  # production defaults: only stop() ends it
    feeder.join()
    assert not failure, failure
    assert rounds == [[0] * 4, [0] * 4 + [1] * 4, [0] * 4 + [1] * 4 + [2] * 4]
    assert sum(kafka.committed(group, src).values()) == 12


def test_streamed_stateless_pipelines_take_larger_micro_batches_by_default():
    topics_only = plan_of(_topics_only)
    assert records_per_partition(topics_only, fused=True, limited=False) == STREAMED_BATCH_RECORDS == 250_000
    # their tasks stream the records: no bound on the whole micro-batch
    assert records_per_batch(topics_only, fused=True, limited=False) == 0
    # a run with timeout or count, or a pipeline off the fused path (a plain path asked for,
    # or state), a sink (it buffers a micro-batch) and a transaction (it holds one) hold the
    # records of a micro-batch: BATCH_RECORDS in all, which one partition may take alone
    eos = dataclasses.replace(topics_only, eos=object())
    for plan, fused, limited in [
        (topics_only, True, True),
        (topics_only, False, False),
        (plan_of(_stateful), False, False),
        (plan_of(_with_sink), True, False),
        (eos, True, False),
    ]:
        assert records_per_batch(plan, fused=fused, limited=limited) == BATCH_RECORDS == 500_000
        assert records_per_partition(plan, fused=fused, limited=limited) == BATCH_RECORDS
    # commit_every lowers either default of a partition, never raises it
    assert records_per_partition(topics_only, fused=True, limited=False, commit_every=1_000) == 1_000
    assert records_per_partition(plan_of(_stateful), fused=False, limited=False, commit_every=10**6) == BATCH_RECORDS


def _run_until_read(app, n: int) -> dict:
    """``app.run()`` with production defaults until the application has read ``n`` records (at
    most 90 s), stopped from another thread; returns its status at that point."""
    import threading

    seen: list[dict] = []

    def stop_when_done() -> None:
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline and app.status().get("inputs", 0) < n:
            time.sleep(0.1)
        seen.append(app.status())
        app.stop()

    stopper = threading.Thread(target=stop_when_done)
    stopper.start()
    app.run()
    stopper.join()
    return seen[0]


@pytest.mark.parametrize("cap", [None, 100], ids=["default", "set"])
def test_a_stateful_backlog_is_read_in_micro_batches_of_the_budget(make_app, kafka, monkeypatch, tmp_path, cap):
    """A backlog of 130 records over two partitions (65 each), a running count per key and
    ``app.run()`` without limits, with the engine's held-batch budget scaled down to 100
    records: by default the micro-batches take 100 records in all (50 of each partition),
    then the other 30, so two micro-batches; ``max_records_per_partition=100`` replaces the
    budget, and one micro-batch takes all 130. Every key counts each of its records once."""
    import json

    from streamspark.engine import pacing

    monkeypatch.setattr(pacing, "BATCH_RECORDS", 100)
    n = 130
    src, out = kafka.new_topic(partitions=2), kafka.new_topic()
    # ten keys, each in one partition (as a keyed producer places them): 13 records each
    kafka.produce(src, [{"value": b"%d" % i, "key": b"k%d" % (2 * (i // 2 % 5) + i % 2), "partition": i % 2} for i in range(n)])
    group = f"held-backlog-{cap}"
    app = make_app(consumer_group=group, max_records_per_partition=cap, state_dir=str(tmp_path / "state"))

    def count(value: str, state) -> dict:
        seen = state.get("n", 0) + 1
        state.set("n", seen)
        return {"v": int(value), "n": seen}

    sdf = app.dataframe(app.topic(src, value_deserializer="str"))
    sdf.apply(count, stateful=True).to_topic(app.topic(out, value_serializer="json"))
    status = _run_until_read(app, n)
    assert (status["inputs"], status["outputs"]) == (n, n)
    assert status["batches"] == (2 if cap is None else 1)
    assert kafka.committed(group, src) == {0: 65, 1: 65}
    counts: dict[bytes, list[int]] = {}
    for message in kafka.consume(out, expected=n, timeout=40):
        counts.setdefault(message.key(), []).append(json.loads(message.value())["n"])
    assert {k: sorted(v) for k, v in counts.items()} == {b"k%d" % k: list(range(1, 14)) for k in range(10)}


@pytest.mark.parametrize("cap", [None, 100], ids=["default", "set"])
def test_a_stateless_backlog_is_read_in_micro_batches_of_the_cap(make_app, kafka, monkeypatch, cap):
    """A backlog of 130 records in one partition, a stateless pipeline writing a topic and
    ``app.run()`` without limits, with the engine's defaults scaled down to 100 and 250 records:
    one micro-batch by default, two with ``max_records_per_partition=100``; every record is
    processed once and committed."""
    from streamspark.engine import pacing

    monkeypatch.setattr(pacing, "BATCH_RECORDS", 100)
    monkeypatch.setattr(pacing, "STREAMED_BATCH_RECORDS", 250)
    monkeypatch.delenv("STREAMSPARK_PLAIN_PATHS", raising=False)  # the fused path
    n = 130
    src, out = kafka.new_topic(), kafka.new_topic()
    kafka.produce(src, [{"value": b"%d" % i} for i in range(n)])
    group = f"backlog-{cap}"
    app = make_app(consumer_group=group, max_records_per_partition=cap)
    app.dataframe(app.topic(src, value_deserializer="str")).apply(str.upper).to_topic(app.topic(out, value_serializer="str"))
    status = _run_until_read(app, n)
    assert (status["inputs"], status["outputs"]) == (n, n)
    assert status["batches"] == (1 if cap is None else 2)
    assert kafka.committed(group, src) == {0: n}
