"""KafkaReplicatorSource: a topic of a second embedded broker (the source cluster) copied into the
application's, read by a pipeline on Spark, resumed after a kill -9, and its bad input; the
checkpoint and the defaults in-process."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections import Counter
from pathlib import Path
from typing import Any, Optional

import pytest

from streamspark import Application
from streamspark.models.topics import Topic
from streamspark.sources import KafkaReplicatorSource, SourceException, SourceInputError
from streamspark.sources.base.exceptions import CheckpointProducerTimeout
from streamspark.sources.core.kafka import Checkpoint
from streamspark.testing.broker import free_port

from ..conftest import RecordingProducer

APP = Path(__file__).parents[1] / "crash_app.py"


def app_config(address: str, **kwargs: Any) -> Any:
    kwargs.setdefault("consumer_group", f"g-{uuid.uuid4().hex[:8]}")
    return Application(broker_address=address, loglevel=None, **kwargs).config


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


# --- in-process: defaults and configuration ---------------------------------------------


def test_defaults_follow_the_reference_and_the_application():
    config = app_config("127.0.0.1:9092", auto_offset_reset="earliest", consumer_poll_timeout=2.5)
    source = KafkaReplicatorSource("eu", config, topic="orders", broker_address="10.0.0.5:9092")
    assert (source.auto_offset_reset, source.consumer_poll_timeout, source.shutdown_timeout) == ("latest", 2.5, 10)
    assert (source.source_consumer_group, source.target_consumer_group) == ("source-eu", "source-eu-offsets")
    # as the reference: a zero timeout takes the application's; the offsets group takes its prefix
    assert KafkaReplicatorSource("eu", config, "orders", "h:1", consumer_poll_timeout=0).consumer_poll_timeout == 2.5
    prefixed = config.copy(consumer_group_prefix="ws1")
    assert KafkaReplicatorSource("eu", prefixed, "orders", "h:1").target_consumer_group == "ws1-source-eu-offsets"
    assert source.transactional_id == "streamspark-replicator-eu"
    assert source.consumer_extra_config == {}
    # None takes the application's auto_offset_reset
    assert KafkaReplicatorSource("eu", config, "orders", "h:1", auto_offset_reset=None).auto_offset_reset == "earliest"
    explicit = KafkaReplicatorSource(
        "eu",
        config,
        "orders",
        "h:1",
        consumer_poll_timeout=0.1,
        consumer_extra_config={"fetch.min.bytes": 1},
        transactional_id="eu-1",
    )
    assert (explicit.consumer_poll_timeout, explicit.consumer_extra_config, explicit.transactional_id) == (
        0.1,
        {"fetch.min.bytes": 1},
        "eu-1",
    )


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        ({"app_config": {"broker_address": "h:1"}}, TypeError, "app_config must be the application's configuration"),
        ({"auto_offset_reset": "newest"}, ValueError, "auto_offset_reset must be"),
        ({"topic": ""}, ValueError, "topic"),
        ({"broker_address": ""}, ValueError, "broker_address"),
        ({"name": ""}, ValueError, "name"),
    ],
)
def test_bad_arguments_are_refused_when_the_source_is_built(kwargs, error, match):
    arguments = {"name": "eu", "app_config": app_config("127.0.0.1:9092"), "topic": "orders", "broker_address": "h:1", **kwargs}
    with pytest.raises(error, match=match):
        KafkaReplicatorSource(**arguments)


def test_an_unreachable_source_cluster_fails_app_dataframe_naming_the_source():
    address = f"127.0.0.1:{free_port()}"  # nothing listens there
    app = Application(broker_address="127.0.0.1:9092", consumer_group="g", request_timeout=1, loglevel=None)
    source = KafkaReplicatorSource("eu-replica", app.config, topic="orders", broker_address=address)
    with pytest.raises(SourceInputError) as info:
        app.dataframe(source=source)
    message = str(info.value)
    assert 'Source "eu-replica"' in message and f'topic "orders" on the source cluster {address}' in message
    assert "did not answer within 1" in message


def test_an_unreachable_source_cluster_stops_the_start_and_reaches_the_connect_callback():
    address = f"127.0.0.1:{free_port()}"
    failures: list[Optional[Exception]] = []

    def on_failure(exc: Optional[Exception]) -> None:
        failures.append(exc)
        raise exc  # type: ignore[misc]

    source = KafkaReplicatorSource(
        "eu-replica",
        app_config("127.0.0.1:9092", request_timeout=1),
        topic="orders",
        broker_address=address,
        on_client_connect_failure=on_failure,
    )
    source.configure(Topic("dest"), RecordingProducer())  # type: ignore[arg-type]
    with pytest.raises(SourceInputError, match=f'Source "eu-replica" cannot read topic "orders" on the source cluster {address}'):
        source.start()
    assert len(failures) == 1 and isinstance(failures[0], SourceInputError)


# --- in-process: the checkpoint --------------------------------------------------------------


class Events:
    """Stands in for the producer and the offsets consumer; records the calls in order."""

    def __init__(self, undelivered: int = 0) -> None:
        self.calls: list[Any] = []
        self.undelivered = undelivered
        self.client = self

    # producer
    def flush(self, timeout: Optional[float] = None) -> int:
        self.calls.append("flush")
        return self.undelivered

    def send_offsets_to_transaction(self, offsets: list[Any], metadata: Any, timeout: float) -> None:
        self.calls.append(("send_offsets", [(tp.topic, tp.partition, tp.offset) for tp in offsets], metadata))

    def commit_transaction(self, timeout: Optional[float] = None) -> None:
        self.calls.append("commit_transaction")

    def abort_transaction(self, timeout: Optional[float] = None) -> None:
        self.calls.append("abort_transaction")

    # consumer
    def commit(self, offsets: Optional[list[Any]] = None, asynchronous: bool = True) -> list[Any]:
        self.calls.append(("commit", [(tp.topic, tp.partition, tp.offset) for tp in offsets or []], asynchronous))
        return offsets or []

    def consumer_group_metadata(self) -> str:
        return "group-metadata"


def checkpoint(events: Events, exactly_once: bool = False, **kwargs: Any) -> Checkpoint:
    kwargs.setdefault("commit_interval", 60)
    return Checkpoint(
        producer=events,
        producer_topic=Topic("dest"),
        consumer=events,  # type: ignore[arg-type]
        exactly_once=exactly_once,
        **kwargs,
    )


def test_at_least_once_a_commit_delivers_the_messages_then_commits_the_next_offsets():
    events = Events()
    cp = checkpoint(events)
    for partition, offset in ((0, 4), (1, 7), (0, 5)):
        cp.store_offset("orders", partition, offset)
    cp.commit()
    # offsets are committed under the destination topic, the one after the last replicated message
    assert events.calls == ["flush", ("commit", [("dest", 0, 6), ("dest", 1, 8)], False)]
    assert cp.empty()


def test_exactly_once_the_offsets_are_committed_in_the_producer_transaction():
    events = Events()
    cp = checkpoint(events, exactly_once=True)
    cp.store_offset("orders", 2, 10)
    cp.commit()
    assert events.calls == ["flush", ("send_offsets", [("dest", 2, 11)], "group-metadata"), "commit_transaction"]


def test_undelivered_messages_fail_the_commit_and_nothing_is_committed():
    events = Events(undelivered=3)
    cp = checkpoint(events)
    cp.store_offset("orders", 0, 1)
    with pytest.raises(CheckpointProducerTimeout, match="3 replicated message"):
        cp.commit()
    assert events.calls == ["flush"]


def test_close_aborts_the_transaction_only_under_exactly_once():
    at_least_once, exactly_once = Events(), Events()
    checkpoint(at_least_once).close()
    checkpoint(exactly_once, exactly_once=True).close()
    assert (at_least_once.calls, exactly_once.calls) == ([], ["abort_transaction"])


def test_a_checkpoint_expires_after_commit_every_offsets_or_commit_interval():
    by_count = checkpoint(Events(), commit_every=3)
    for offset in range(2):
        by_count.store_offset("orders", 0, offset)
    assert not by_count.expired()
    by_count.store_offset("orders", 1, 0)
    assert by_count.expired()
    assert checkpoint(Events(), commit_interval=0).expired()
    assert checkpoint(Events(), commit_interval=0).empty()


# --- on the brokers: the source's process ------------------------------------------------------


def test_messages_are_copied_to_the_same_partition_and_a_new_instance_resumes_after_the_committed_offsets(
    sources, kafka, source_cluster
):
    src = source_cluster.new_topic(partitions=2)
    originals = [
        {
            "value": f"v{i}".encode(),
            "key": f"k{i}".encode(),
            "partition": i % 2,
            "headers": [("seq", str(i).encode())],
            "timestamp": 1_000 + i,
        }
        for i in range(6)
    ]
    source_cluster.produce(src, originals)
    config = app_config(kafka.address, commit_interval=0.2)
    name = unique("copy")

    def replicator() -> KafkaReplicatorSource:
        return KafkaReplicatorSource(name, config, topic=src, broker_address=source_cluster.address, auto_offset_reset="earliest")

    default = replicator().default_topic()  # named after the source, created like the source topic
    assert default.name == name
    assert default.create_config is not None and default.create_config.num_partitions == 2
    dest = kafka.new_topic(partitions=2)
    manager = sources.start(replicator(), default.__clone__(name=dest))
    copied = kafka.consume(dest, expected=6)
    assert sorted((m.partition(), m.key(), m.value(), m.headers(), m.timestamp()[1]) for m in copied) == sorted(
        (o["partition"], o["key"], o["value"], o["headers"], o["timestamp"]) for o in originals
    )
    manager.stop()
    manager.raise_for_error()
    assert kafka.committed(f"source-{name}-offsets", dest) == {0: 3, 1: 3}

    source_cluster.produce(src, [{"value": b"late", "key": b"k6", "partition": 1}])
    manager = sources.start(replicator(), default.__clone__(name=dest))
    assert len(kafka.consume(dest, expected=7)) == 7
    manager.stop()
    manager.raise_for_error()
    assert kafka.committed(f"source-{name}-offsets", dest) == {0: 3, 1: 4}
    assert kafka.high_watermarks(dest) == {0: 3, 1: 4}


def test_a_missing_source_topic_stops_the_source_at_its_start_naming_it(sources, kafka, source_cluster):
    dest = kafka.new_topic()
    name = unique("missing")
    source = KafkaReplicatorSource(name, app_config(kafka.address), topic="no-such-topic", broker_address=source_cluster.address)
    with pytest.raises(SourceException, match=f'Source "{name}"') as info:
        sources.wait(sources.start(source, Topic(dest)))
    assert isinstance(info.value.__cause__, SourceInputError)
    assert str(info.value.__cause__) == (
        f'Source "{name}" cannot read topic "no-such-topic" on the source cluster '
        f"{source_cluster.address}: the topic does not exist"
    )


def test_a_destination_with_fewer_partitions_than_the_source_topic_is_refused(sources, kafka, source_cluster):
    src, dest = source_cluster.new_topic(partitions=2), kafka.new_topic(partitions=1)
    name = unique("narrow")
    source = KafkaReplicatorSource(name, app_config(kafka.address), topic=src, broker_address=source_cluster.address)
    with pytest.raises(SourceException, match=f'Source "{name}"') as info:
        sources.wait(sources.start(source, Topic(dest)))
    assert "has 2 partitions, more than the 1 of the destination topic" in str(info.value.__cause__)


# --- through the application on Spark ------------------------------------------------------


def test_app_dataframe_over_a_replicator_reads_the_other_cluster_s_records(make_app, kafka, source_cluster):
    src = source_cluster.new_topic(partitions=2)
    source_cluster.produce(
        src,
        [
            {
                "value": json.dumps({"i": i}).encode(),
                "key": f"k{i}".encode(),
                "partition": i % 2,
                "timestamp": 1_700_000_000_000 + i,
            }
            for i in range(8)
        ],
    )
    app = make_app()
    name = unique("replica")
    sdf = app.dataframe(
        source=KafkaReplicatorSource(
            name, app.config, topic=src, broker_address=source_cluster.address, auto_offset_reset="earliest"
        )
    )
    assert sdf.topic.name == f"source__{name}"
    sdf = sdf.apply(lambda v: {**v, "double": v["i"] * 2})
    rows = app.run(count=8, timeout=90, metadata=True)
    assert sorted((r["i"], r["double"], r["_key"], r["_partition"], r["_timestamp"]) for r in rows) == [
        (i, 2 * i, f"k{i}".encode(), i % 2, 1_700_000_000_000 + i) for i in range(8)
    ]
    assert len(kafka.admin.list_topics(timeout=10).topics[f"source__{name}"].partitions) == 2


def test_app_run_with_a_missing_source_topic_fails_naming_the_source(make_app, source_cluster):
    app = make_app()
    name = unique("nowhere")
    app.dataframe(source=KafkaReplicatorSource(name, app.config, topic="no-such-topic", broker_address=source_cluster.address))
    with pytest.raises(SourceException, match=f'Source "{name}"') as info:
        app.run()  # unbounded: only the source's failure ends it
    assert 'cannot read topic "no-such-topic" on the source cluster' in str(info.value)


# --- kill -9 of the whole application mid-replication --------------------------------------------


def _start(broker, source_cluster, src, out, state, group, name, guarantee, log):
    return subprocess.Popen(
        [sys.executable, str(APP), "replicator", broker.address, out, state, group, name, guarantee, source_cluster.address, src],
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
        cwd=str(Path(__file__).parents[3]),
    )


def _ids(kafka, topic, expected, timeout, isolation="read_uncommitted"):
    return [json.loads(m.value())["i"] for m in kafka.consume(topic, expected=expected, timeout=timeout, isolation=isolation)]


@pytest.mark.harness(seconds=150)
@pytest.mark.parametrize("guarantee", ["exactly-once", "at-least-once"])
def test_kill_9_mid_replication_then_restart(broker, kafka, source_cluster, tmp_path, guarantee):
    src, out = source_cluster.new_topic(partitions=2), kafka.new_topic(partitions=2)
    state, group, name = str(tmp_path / "state"), unique("replicator-app"), unique("replica")
    total, first, chunk = 1000, 100, 50

    def records(start: int, stop: int) -> list[dict[str, Any]]:
        return [{"value": json.dumps({"i": i}).encode(), "key": f"k{i}".encode(), "partition": i % 2} for i in range(start, stop)]

    source_cluster.produce(src, records(0, first))
    log = open(tmp_path / "app.log", "ab")
    proc = _start(broker, source_cluster, src, out, state, group, name, guarantee, log)
    try:
        deadline = time.monotonic() + 120
        while len(_ids(kafka, out, expected=first, timeout=2)) < first:
            assert proc.poll() is None, (tmp_path / "app.log").read_text()[-3000:]
            assert time.monotonic() < deadline, "no output within 120s"

        def feed() -> None:
            for start in range(first, total, chunk):
                source_cluster.produce(src, records(start, start + chunk))
                time.sleep(0.2)

        feeder = threading.Thread(target=feed)
        feeder.start()
        time.sleep(1.5)
        os.killpg(proc.pid, signal.SIGKILL)  # the driver, Spark and the replicator's process
        proc.wait(30)
        assert feeder.is_alive(), "the source topic was complete before the kill"
        feeder.join()

        proc = _start(broker, source_cluster, src, out, state, group, name, guarantee, log)
        isolation = "read_committed" if guarantee == "exactly-once" else "read_uncommitted"
        deadline = time.monotonic() + 150
        ids: list[int] = []
        while time.monotonic() < deadline and len(set(ids)) < total:
            assert proc.poll() is None, (tmp_path / "app.log").read_text()[-3000:]
            ids = _ids(kafka, out, expected=total, timeout=3, isolation=isolation)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(30)
        log.close()
    missing = set(range(total)) - set(ids)
    assert not missing, f"lost {len(missing)} records, e.g. {sorted(missing)[:10]}"
    if guarantee == "exactly-once":
        assert [i for i, n in Counter(ids).items() if n > 1] == []


def test_quix_environment_source_imports_at_the_references_paths_and_refuses_with_the_reason():
    from streamspark.exceptions import StreamsparkException
    from streamspark.sources import QuixEnvironmentSource as from_sources
    from streamspark.sources.core.kafka.quix import QuixEnvironmentSource

    assert from_sources is QuixEnvironmentSource and issubclass(QuixEnvironmentSource, KafkaReplicatorSource)
    with pytest.raises(StreamsparkException, match='Quix Cloud platform .* workspace "ws-1".* KafkaReplicatorSource'):
        QuixEnvironmentSource("env", app_config("127.0.0.1:9092"), "orders", quix_sdk_token="t", quix_workspace_id="ws-1")
