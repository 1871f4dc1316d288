"""How the producers that tasks use are configured, and their delivery reports.

Defaults (``producer_extra_config`` overrides them): idempotent, ``linger.ms=5``, and
``compression.type=lz4``. Compression is on because a broker's cost grows with the bytes it
stores: on the embedded broker, 500k ~150-byte JSON messages cost it ~8 CPU-seconds
uncompressed and ~1 with lz4, CPU that a 2-core machine otherwise takes from the pipeline.

A per-message ``on_delivery`` callback costs a Python object and a Python call for every
produced message, about half of the producer's cost in a task. The task producers are instead
configured with one callback for the whole producer and ``delivery.report.only.error``, so a
successful delivery never reaches Python; failed ones are collected here and handled when the
task flushes its producer.
"""

from __future__ import annotations

import logging
from typing import Any

__all__ = ("DeliveryReports", "reporting_config", "new_task_producer", "client_logger", "TASK_PRODUCER_DEFAULTS")

#: settings of every task producer unless the application's producer config says otherwise
TASK_PRODUCER_DEFAULTS: dict[str, Any] = {"enable.idempotence": True, "linger.ms": 5, "compression.type": "lz4"}


class DeliveryReports:
    """The failed deliveries of one producer, in the order librdkafka reported them.

    >>> reports = DeliveryReports()
    >>> reports(None, "delivered")   # success reports (if any arrive) are ignored
    >>> reports("MSG_TIMED_OUT", "message")
    >>> reports.take()
    [('MSG_TIMED_OUT', 'message')]
    >>> reports.take()
    []
    """

    __slots__ = ("failed",)

    def __init__(self) -> None:
        self.failed: list[tuple[Any, Any]] = []

    def __call__(self, err: Any, msg: Any) -> None:
        if err is not None:
            self.failed.append((err, msg))

    def take(self) -> list[tuple[Any, Any]]:
        """The failures reported since the last call (and forget them)."""
        failed, self.failed = self.failed, []
        return failed


def reporting_config(config: dict[str, Any], reports: DeliveryReports) -> dict[str, Any]:
    """``config`` with ``reports`` as the producer-wide delivery callback, called on failures only."""
    return {**config, "on_delivery": reports, "delivery.report.only.error": True}


def client_logger() -> logging.Logger:
    """The logger that task producers hand librdkafka's log lines to (``streamspark.kafka.client``).

    librdkafka then logs through the producer's queue, served while a task polls or flushes it:
    a producer a worker process keeps between micro-batches stays silent once the application
    stopped (no reconnect chatter after a clean stop, e.g. when the broker goes away first).
    Its level is WARNING unless the program set one: connection failures during a run are shown,
    routine disconnects are not.
    """
    log = logging.getLogger("streamspark.kafka.client")
    if log.level == logging.NOTSET:
        log.setLevel(logging.WARNING)
    return log


def new_task_producer(config: dict[str, Any]) -> tuple[Any, DeliveryReports]:
    """A confluent-kafka producer with the task defaults under ``config``, and its failure reports."""
    from confluent_kafka import Producer

    reports = DeliveryReports()
    settings = {**TASK_PRODUCER_DEFAULTS, "logger": client_logger(), **config}
    return Producer(reporting_config(settings, reports)), reports
