"""The Kafka producer handed to a source: delivery failures raise, optional transactions.

>>> producer = SourceProducer({"bootstrap.servers": "127.0.0.1:9092"})  # doctest: +SKIP
>>> producer.produce("topic", value=b"v", key=b"k")  # doctest: +SKIP
>>> producer.flush(10)  # doctest: +SKIP
0
"""

from __future__ import annotations

import logging
from typing import Any, Mapping, Optional, Union

import confluent_kafka

from ...kafka.exceptions import KafkaProducerDeliveryError
from ...kafka.producer import PRODUCER_ON_ERROR_RETRIES, PRODUCER_POLL_TIMEOUT, produce_retrying
from ...models.types import Headers

__all__ = ("SourceProducer",)

logger = logging.getLogger(__name__)


class SourceProducer:
    """A confluent-kafka producer for a source's process, created on first use.

    - A message the broker refused raises :class:`KafkaProducerDeliveryError` from the next
      ``produce``/``flush`` (nothing fails silently).
    - With ``transactional_id``, messages are produced in Kafka transactions: the first
      ``produce`` after a commit opens one, :meth:`commit_transaction` commits it.

    :param config: librdkafka settings (connection and producer settings).
    :param transactional_id: enables transactions (a stable id: a restarted source fences the
        previous holder and aborts what it left uncommitted).
    :param flush_timeout: the default timeout of :meth:`flush` and of the transaction calls.
    """

    def __init__(
        self,
        config: Mapping[str, Any],
        transactional_id: Optional[str] = None,
        flush_timeout: float = 30.0,
    ) -> None:
        self._config = dict(config)
        self._config.setdefault("enable.idempotence", True)
        if transactional_id is not None:
            self._config["transactional.id"] = transactional_id
        self._transactional_id = transactional_id
        self._flush_timeout = flush_timeout
        self._inner: Optional[confluent_kafka.Producer] = None
        self._in_transaction = False
        self._error: Optional[KafkaProducerDeliveryError] = None

    @property
    def transactional(self) -> bool:
        return self._transactional_id is not None

    @property
    def client(self) -> confluent_kafka.Producer:
        """The confluent-kafka producer (created, and its transactions initialised, on first use)."""
        if self._inner is None:
            # librdkafka's log lines go through the producer's queue to Python logging (served
            # while the source produces or flushes): no reconnect chatter once the source is idle
            self._inner = confluent_kafka.Producer(self._config, logger=logging.getLogger("streamspark.kafka.client"))
            if self._transactional_id is not None:
                # fences a previous process with the same id and aborts its open transaction
                self._inner.init_transactions(self._flush_timeout)
        return self._inner

    def _on_delivery(self, err: Any, msg: Any) -> None:
        if err is not None and self._error is None:
            self._error = KafkaProducerDeliveryError(err, msg.topic(), msg.partition(), msg.key())

    def raise_for_error(self) -> None:
        """Raise the first delivery failure seen so far, if any."""
        if self._error is not None:
            raise self._error

    def produce(
        self,
        topic: str,
        value: Optional[Union[str, bytes]] = None,
        key: Optional[Union[str, bytes]] = None,
        headers: Headers = None,
        partition: Optional[int] = None,
        timestamp: Optional[int] = None,
        poll_timeout: float = PRODUCER_POLL_TIMEOUT,
        buffer_error_max_tries: int = PRODUCER_ON_ERROR_RETRIES,
    ) -> None:
        """Queue one message; when the local queue is full, poll up to ``poll_timeout`` and
        try again, at most ``buffer_error_max_tries`` more times."""
        self.raise_for_error()
        client = self.client
        if self._transactional_id is not None and not self._in_transaction:
            client.begin_transaction()
            self._in_transaction = True
        produce_retrying(
            client,
            topic,
            value=value,
            key=key,
            headers=headers,
            partition=partition,
            timestamp=timestamp,
            on_delivery=self._on_delivery,
            poll_timeout=poll_timeout,
            buffer_error_max_tries=buffer_error_max_tries,
        )
        client.poll(0)

    def poll(self, timeout: float = 0) -> int:
        return 0 if self._inner is None else self._inner.poll(timeout)

    def flush(self, timeout: Optional[float] = None) -> int:
        """Wait for delivery; returns how many messages are still queued.

        :raises KafkaProducerDeliveryError: a message was refused by the broker.
        """
        if self._inner is None:
            return 0
        remaining = self._inner.flush(self._flush_timeout if timeout is None else timeout)
        self.raise_for_error()
        return remaining

    def commit_transaction(self, timeout: Optional[float] = None) -> None:
        """Commit the open transaction (flushing it first); nothing to do when none is open."""
        if not self._in_transaction:
            return
        assert self._inner is not None
        self._inner.commit_transaction(self._flush_timeout if timeout is None else timeout)
        self._in_transaction = False
        self.raise_for_error()

    def abort_transaction(self, timeout: Optional[float] = None) -> None:
        """Abort the open transaction; nothing to do when none is open."""
        if not self._in_transaction:
            return
        assert self._inner is not None
        self._inner.abort_transaction(self._flush_timeout if timeout is None else timeout)
        self._in_transaction = False
