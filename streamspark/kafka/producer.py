"""A Kafka producer with the reference's conveniences (lazy client, BufferError retries)."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, Callable, Optional, Union

import confluent_kafka

from .configuration import ConnectionConfig

if TYPE_CHECKING:  # models imports this module (topic admin): a runtime import would be circular
    from ..models.types import Headers

__all__ = ("Producer", "PRODUCER_DEFAULTS", "PRODUCER_POLL_TIMEOUT", "PRODUCER_ON_ERROR_RETRIES", "produce_retrying")

logger = logging.getLogger(__name__)

#: librdkafka settings of the application's producers unless ``producer_extra_config`` overrides
#: them: idempotent, and keys spread over partitions with the Java client's hash (murmur2), so a
#: key lands on the partition Quix Streams and Kafka's Java/Streams clients pick for it.
PRODUCER_DEFAULTS: dict[str, Any] = {"enable.idempotence": True, "partitioner": "murmur2"}
#: Seconds ``produce`` polls for when the local queue is full, before trying again.
PRODUCER_POLL_TIMEOUT = 30.0
#: How many times ``produce`` tries again after ``BufferError`` (a full local queue).
PRODUCER_ON_ERROR_RETRIES = 10


def _default_error_cb(error: confluent_kafka.KafkaError) -> None:
    """Log a client-level error (librdkafka retries most of them by itself)."""
    logger.error('Kafka client error: %s (code="%s")', error.str(), error.name())


def broker_config(broker_address: Union[str, ConnectionConfig]) -> dict[str, Any]:
    """librdkafka settings for a broker address string or a :class:`ConnectionConfig`."""
    if isinstance(broker_address, ConnectionConfig):
        return broker_address.as_librdkafka_dict()
    return {"bootstrap.servers": broker_address}


def produce_retrying(
    client: confluent_kafka.Producer,
    topic: str,
    *,
    value: Optional[Union[str, bytes]] = None,
    key: Optional[Union[str, bytes]] = None,
    headers: Headers = None,
    partition: Optional[int] = None,
    timestamp: Optional[int] = None,
    on_delivery: Optional[Callable[..., None]] = None,
    poll_timeout: float = PRODUCER_POLL_TIMEOUT,
    buffer_error_max_tries: int = PRODUCER_ON_ERROR_RETRIES,
) -> None:
    """Queue one message on a confluent-kafka ``client``, passing only the arguments that are
    set. On a full local queue (``BufferError``) poll for up to ``poll_timeout`` seconds to free
    it and try again, ``buffer_error_max_tries`` times (0: no retry); then the error is raised.
    """
    kwargs: dict[str, Any] = {"value": value, "key": key}
    if headers:
        kwargs["headers"] = headers
    if partition is not None:
        kwargs["partition"] = partition
    if timestamp is not None:
        kwargs["timestamp"] = timestamp
    if on_delivery is not None:
        kwargs["on_delivery"] = on_delivery
    for attempt in range(buffer_error_max_tries + 1):
        try:
            client.produce(topic, **kwargs)
            return
        except BufferError:
            if attempt >= buffer_error_max_tries:
                raise
            client.poll(poll_timeout)


class Producer:
    """A confluent-kafka producer, created on first use (no network call before that).

    :param broker_address: ``"host:port"`` or a :class:`ConnectionConfig`.
    :param logger: the logger librdkafka's log lines go to.
    :param error_callback: called with client-level errors (default: log them).
    :param extra_config: more librdkafka settings (over :data:`PRODUCER_DEFAULTS`); the
        arguments above win over them.
    :param flush_timeout: the default timeout of :meth:`flush` (None: wait for every message).
    :param transactional: the producer uses transactions.

    >>> with Producer("127.0.0.1:9092") as producer:  # doctest: +SKIP
    ...     producer.produce("topic", value=b"v", key=b"k")
    """

    def __init__(
        self,
        broker_address: Union[str, ConnectionConfig],
        logger: logging.Logger = logger,
        error_callback: Callable[[confluent_kafka.KafkaError], None] = _default_error_cb,
        extra_config: Optional[dict[str, Any]] = None,
        flush_timeout: Optional[float] = None,
        transactional: bool = False,
    ) -> None:
        config = {**PRODUCER_DEFAULTS, **(extra_config or {}), **broker_config(broker_address)}
        if error_callback is not None:
            config["error_cb"] = error_callback
        self._config = config
        self._logger = logger
        self._flush_timeout = flush_timeout
        self._transactional = transactional
        self._inner: Optional[confluent_kafka.Producer] = None

    @property
    def _producer(self) -> confluent_kafka.Producer:
        if self._inner is None:
            self._inner = confluent_kafka.Producer(self._config, logger=self._logger)
        return self._inner

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
        on_delivery: Optional[Callable[..., None]] = None,
    ) -> None:
        """Queue one message (serve pending delivery callbacks first).

        On a full local queue (``BufferError``) it polls for up to ``poll_timeout`` seconds to
        free it and tries again, ``buffer_error_max_tries`` times (0: no retry).
        """
        self._producer.poll(0)
        produce_retrying(
            self._producer,
            topic,
            value=value,
            key=key,
            headers=headers,
            partition=partition,
            timestamp=timestamp,
            on_delivery=on_delivery,
            poll_timeout=poll_timeout,
            buffer_error_max_tries=buffer_error_max_tries,
        )

    def poll(self, timeout: float = 0) -> int:
        """Serve delivery callbacks for up to ``timeout`` seconds (-1: until there is one)."""
        return self._producer.poll(timeout)

    def flush(self, timeout: Optional[float] = None) -> int:
        """Wait for delivery; returns the number of messages still queued."""
        if self._inner is None:
            return 0
        timeout = self._flush_timeout if timeout is None else timeout
        return self._inner.flush(timeout if timeout is not None else -1)

    def __len__(self) -> int:
        return 0 if self._inner is None else len(self._inner)

    def __enter__(self) -> "Producer":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.flush()
