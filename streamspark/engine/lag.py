"""Consumer lag per topic-partition after each committed micro-batch.

The lag of a partition is its high watermark (the offset the next message will get) minus the
end offset of the last micro-batch Spark committed: the messages still to process. The driver
reads it after each batch's progress report, with one watermark query per partition, outside
the micro-batch (the batch does not wait for it).

>>> end_offsets({"sources": [{"endOffset": '{"readings": {"0": 10, "1": 7}}'}]})
{'readings': {0: 10, 1: 7}}
>>> total_lag({"readings": {0: 5, 1: 0}, "other": {0: 2}})
7
"""

from __future__ import annotations

import json
import logging
from typing import Any, Optional

from .progress_log import Throttle

__all__ = ("LagMonitor", "end_offsets", "total_lag", "Lag")

logger = logging.getLogger(__name__)

#: topic -> partition -> messages not processed yet
Lag = dict[str, dict[int, int]]


def end_offsets(progress: Optional[dict[str, Any]]) -> dict[str, dict[int, int]]:
    """The end offsets of the Kafka source in a streaming progress report ({} if none)."""
    if not progress or not progress.get("sources"):
        return {}
    end = progress["sources"][0].get("endOffset")
    if isinstance(end, str):
        end = json.loads(end)
    if not isinstance(end, dict):
        return {}
    return {topic: {int(p): int(o) for p, o in parts.items()} for topic, parts in end.items()}


def total_lag(lag: Lag) -> int:
    """The messages not processed yet, over all partitions."""
    return sum(sum(parts.values()) for parts in lag.values())


class LagMonitor:
    """Computes and logs the lag after each new progress report of a query.

    :param kafka_config: the consumer settings of the application (broker, security).
    :param timeout: seconds to wait for the broker's watermarks.
    """

    def __init__(self, kafka_config: dict[str, Any], timeout: float = 5.0) -> None:
        self.kafka_config = kafka_config
        self.timeout = timeout
        #: the lag after batch :attr:`batch_id` (empty before the first report)
        self.lag: Lag = {}
        self.batch_id: Optional[int] = None
        self._consumer: Any = None
        self._logged: Optional[int] = None
        self._throttle = Throttle()

    def update(self, progress: Optional[dict[str, Any]]) -> Optional[Lag]:
        """Take a progress report; returns the new lag when it names a batch not seen yet."""
        if not progress or progress.get("batchId") is None or progress.get("batchId") == self.batch_id:
            return None
        end = end_offsets(progress)
        if not end:
            return None
        from confluent_kafka import KafkaException, TopicPartition

        lag: Lag = {}
        try:
            for topic, parts in end.items():
                lag[topic] = {}
                for partition, offset in sorted(parts.items()):
                    _, high = self.consumer.get_watermark_offsets(
                        TopicPartition(topic, partition), timeout=self.timeout, cached=False
                    )
                    lag[topic][partition] = max(0, high - offset)
        except KafkaException as exc:
            logger.debug("consumer lag not available: %s", exc)
            return None
        self.lag, self.batch_id = lag, progress["batchId"]
        total = total_lag(lag)
        if total != self._logged:
            # INFO when the reports are due (at most every 10 s) or the lag has just been caught up
            caught_up = total == 0 and bool(self._logged)
            self._logged = total
            detail = ", ".join(f"{t}[{p}]={n}" for t, parts in lag.items() for p, n in parts.items())
            log = logger.info if self._throttle.due() or caught_up else logger.debug
            log("Consumer lag after batch %d: %d (%s)", self.batch_id, total, detail)
        return lag

    @property
    def consumer(self) -> Any:
        if self._consumer is None:
            from confluent_kafka import Consumer

            self._consumer = Consumer(
                {
                    **self.kafka_config,
                    "enable.auto.commit": False,
                    "group.id": self.kafka_config.get("group.id", "streamspark-lag"),
                }
            )
        return self._consumer

    def close(self) -> None:
        if self._consumer is not None:
            self._consumer.close()
            self._consumer = None
