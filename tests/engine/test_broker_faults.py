"""The broker goes away mid-run: back within ``request_timeout``, the application waits and
goes on (nothing lost or duplicated under exactly-once); gone for good, it stops within about
``request_timeout`` with BrokerUnreachableError, and a later run completes the output exactly once."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Consumer, Producer
from confluent_kafka.admin import AdminClient, NewTopic

from streamspark.testing import EmbeddedBroker

APP = Path(__file__).with_name("broker_fault_app.py")
KEYS = 10


class _Setup:
    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.broker = EmbeddedBroker(data_dir=str(tmp / "broker")).start()
        self.src, self.out = f"bf-src-{uuid.uuid4().hex[:6]}", f"bf-out-{uuid.uuid4().hex[:6]}"
        admin = AdminClient({"bootstrap.servers": self.broker.address})
        topics = [NewTopic(name, 2, 1, config={"retention.ms": "-1"}) for name in (self.src, self.out)]
        for fut in admin.create_topics(topics).values():
            fut.result(30)
        self.log = open(tmp / "app.log", "ab")

    def produce(self, first: int, last: int) -> None:
        producer = Producer({"bootstrap.servers": self.broker.address})
        for i in range(first, last):
            producer.produce(self.src, json.dumps({"k": f"k{i % KEYS}", "i": i}).encode(), key=f"k{i % KEYS}".encode())
        assert producer.flush(30) == 0

    def start_app(self, request_timeout: float) -> subprocess.Popen[bytes]:
        return subprocess.Popen(
            [sys.executable, str(APP), self.broker.address, self.src, self.out, str(self.tmp / "state"), str(request_timeout)],
            stdout=self.log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    def outputs(self) -> list[dict[str, Any]]:
        consumer = Consumer(
            {
                "bootstrap.servers": self.broker.address,
                "group.id": f"check-{uuid.uuid4().hex[:6]}",
                "auto.offset.reset": "earliest",
                "isolation.level": "read_committed",
                "enable.auto.commit": False,
            }
        )
        consumer.subscribe([self.out])
        got: list[dict[str, Any]] = []
        idle = time.monotonic()
        while time.monotonic() - idle < 3:
            msg = consumer.poll(0.5)
            if msg is None or msg.error():
                continue
            got.append(json.loads(msg.value()))
            idle = time.monotonic()
        consumer.close()
        return got

    def wait_for(self, n: int, proc: subprocess.Popen[bytes], timeout: float = 180) -> list[dict[str, Any]]:
        deadline = time.monotonic() + timeout
        got: list[dict[str, Any]] = []
        while time.monotonic() < deadline:
            got = self.outputs()
            if len({v["i"] for v in got}) >= n:
                return got
            assert proc.poll() is None, (self.tmp / "app.log").read_text()[-3000:]
            time.sleep(1)
        return got

    def broker_down(self) -> None:
        self.broker.stop()  # the data directory is ours: it stays for the restart

    def close(self, *procs: subprocess.Popen[bytes]) -> None:
        for proc in procs:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
                proc.wait(120)
        self.log.close()
        self.broker.stop()


def _exactly_once(got: list[dict[str, Any]], total: int) -> None:
    ids = [v["i"] for v in got]
    assert sorted(ids) == list(range(total)), f"{len(ids)} outputs, {len(set(ids))} distinct of {total}"
    per_key: dict[str, list[int]] = {}
    for v in got:
        per_key.setdefault(v["k"], []).append(v["n"])
    assert all(sorted(ns) == list(range(1, total // KEYS + 1)) for ns in per_key.values())


@pytest.mark.harness(seconds=100)
def test_broker_away_for_30s_then_back_the_app_waits_and_goes_on(tmp_path):
    setup = _Setup(tmp_path)
    setup.produce(0, 500)
    proc = setup.start_app(request_timeout=60)
    try:
        assert len(setup.wait_for(500, proc)) == 500
        setup.broker_down()
        time.sleep(30)
        setup.broker.start()
        assert proc.poll() is None, "the app stopped while the broker was away"
        setup.produce(500, 1000)
        _exactly_once(setup.wait_for(1000, proc), 1000)
    finally:
        setup.close(proc)


@pytest.mark.harness(seconds=100)
def test_broker_gone_for_good_stops_within_request_timeout_then_a_restart_completes(tmp_path):
    setup = _Setup(tmp_path)
    setup.produce(0, 500)
    proc = setup.start_app(request_timeout=10)
    try:
        assert len(setup.wait_for(500, proc)) == 500
        setup.broker_down()
        gone = time.monotonic()
        code = proc.wait(120)
        took = time.monotonic() - gone
        log = (tmp_path / "app.log").read_text()
        assert code != 0
        assert "BrokerUnreachableError: Kafka broker" in log and "did not answer within 10.0s" in log
        # the source's planning call has request_timeout in all; a micro-batch in flight and the
        # stop add a little
        assert took < 10 + 30, took
        # nothing committed was lost: with the broker back, a new run finishes exactly once
        setup.broker.start()
        setup.produce(500, 1000)
        proc = setup.start_app(request_timeout=10)
        _exactly_once(setup.wait_for(1000, proc), 1000)
    finally:
        setup.close(proc)
