"""Consumer lag per topic-partition after a committed micro-batch (engine/lag.py)."""

from __future__ import annotations

import json
import logging

from streamspark.engine.lag import LagMonitor, end_offsets, total_lag


def _progress(batch_id: int, end: dict) -> dict:
    return {"batchId": batch_id, "timestamp": f"t{batch_id}", "sources": [{"endOffset": json.dumps(end)}]}


def test_lag_is_the_high_watermark_minus_the_committed_end(broker, kafka, caplog):
    topic = kafka.new_topic(partitions=2)
    kafka.produce(topic, [{"value": b"x", "partition": i % 2} for i in range(30)])  # 15 per partition
    monitor = LagMonitor({"bootstrap.servers": broker.address})
    try:
        with caplog.at_level(logging.INFO, logger="streamspark"):
            assert monitor.update(_progress(0, {topic: {"0": 10, "1": 0}})) == {topic: {0: 5, 1: 15}}
        assert monitor.batch_id == 0 and total_lag(monitor.lag) == 20
        assert f"Consumer lag after batch 0: 20 ({topic}[0]=5, {topic}[1]=15)" in caplog.text
        # the same report again, or a report without the source: nothing new
        assert monitor.update(_progress(0, {topic: {"0": 15, "1": 15}})) is None
        assert monitor.update({"batchId": 1, "sources": []}) is None
        assert monitor.update(_progress(1, {topic: {"0": 15, "1": 15}})) == {topic: {0: 0, 1: 0}}
    finally:
        monitor.close()


def test_the_lag_is_logged_at_info_when_due_or_caught_up_and_at_debug_otherwise(broker, kafka, caplog):
    topic = kafka.new_topic(partitions=1)
    kafka.produce(topic, [{"value": b"x", "partition": 0} for _ in range(100)])
    monitor = LagMonitor({"bootstrap.servers": broker.address})
    try:
        with caplog.at_level(logging.DEBUG, logger="streamspark.engine.lag"):
            monitor.update(_progress(0, {topic: {"0": 40}}))  # the first report: INFO
            monitor.update(_progress(1, {topic: {"0": 70}}))  # within 10 s of it: DEBUG
            monitor.update(_progress(2, {topic: {"0": 100}}))  # caught up: INFO
        lines = [(r.levelname, r.getMessage().split(" (")[0]) for r in caplog.records if "Consumer lag" in r.getMessage()]
        assert lines == [
            ("INFO", "Consumer lag after batch 0: 60"),
            ("DEBUG", "Consumer lag after batch 1: 30"),
            ("INFO", "Consumer lag after batch 2: 0"),
        ]
    finally:
        monitor.close()


def test_end_offsets_reads_both_forms_of_the_report():
    assert end_offsets({"sources": [{"endOffset": {"a": {"3": 9}}}]}) == {"a": {3: 9}}
    assert end_offsets(None) == {} and end_offsets({"sources": [{"endOffset": None}]}) == {}


def test_app_status_reports_the_lag_per_partition_while_it_runs(make_app, kafka):
    """``app.status()`` from another thread: batches, records and the consumer lag per
    topic-partition after the last committed micro-batch; ``{"running": False}`` outside a run."""
    import json
    import threading

    src, out = kafka.new_topic(partitions=2), kafka.new_topic()
    kafka.produce(src, [{"value": json.dumps({"i": i}).encode(), "partition": i % 2} for i in range(40)])
    app = make_app(max_records_per_partition=5, commit_interval=0.1)
    app.dataframe(app.topic(src)).to_topic(app.topic(out))
    assert app.status() == {"running": False}
    seen: list[dict] = []
    done = threading.Event()

    def watch() -> None:
        while not done.is_set():
            status = app.status()
            if status.get("batches", 0) >= 1 and status.get("lag"):
                seen.append(status)
            done.wait(0.05)

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        app.run(count=40, timeout=30)
    finally:
        done.set()
        watcher.join()
    assert seen, "no status with a lag seen during the run"
    assert set(seen[0]["lag"]) == {src} and set(seen[0]["lag"][src]) == {0, 1}
    assert seen[0]["total_lag"] == sum(seen[0]["lag"][src].values())
    assert seen[0]["running"] is True and seen[0]["inputs"] >= 10
    assert app.status() == {"running": False}
