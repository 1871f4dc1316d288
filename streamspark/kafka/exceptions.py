"""Errors of the Kafka clients."""

from __future__ import annotations

from typing import Any, Optional

from ..exceptions import BrokerUnreachableError, StreamsparkException

__all__ = (
    "BaseKafkaException",
    "KafkaConsumerException",
    "KafkaProducerDeliveryError",
    "InvalidProducerConfigError",
    "KafkaBrokerUnavailableError",
)

#: The broker did not answer in time (the reference's name for :class:`BrokerUnreachableError`).
KafkaBrokerUnavailableError = BrokerUnreachableError


class BaseKafkaException(StreamsparkException):
    """An error reported by librdkafka; ``error`` is the ``confluent_kafka.KafkaError`` (or its text).

    Shown as the reference shows it, with the error's code and description:

    >>> from confluent_kafka import KafkaError
    >>> str(BaseKafkaException(KafkaError(1, "x")))
    '<BaseKafkaException code="1" description="x">'
    >>> str(BaseKafkaException("Broker: Unknown topic or partition"))  # only the text known
    'Broker: Unknown topic or partition'
    """

    def __init__(self, error: Any) -> None:
        super().__init__(error.str() if hasattr(error, "str") else str(error))
        self.error = error

    @property
    def code(self) -> Optional[int]:
        """librdkafka's error code (None when only the text is known)."""
        return self.error.code() if hasattr(self.error, "code") else None

    @property
    def description(self) -> str:
        """librdkafka's description of the error."""
        return self.error.str() if hasattr(self.error, "str") else str(self.error)

    def __str__(self) -> str:
        if hasattr(self.error, "code") and hasattr(self.error, "str"):
            return f'<{type(self).__name__} code="{self.code}" description="{self.description}">'
        return super().__str__()

    def __repr__(self) -> str:
        return str(self)

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.error,))


class KafkaConsumerException(BaseKafkaException):
    """The consumer returned an error event instead of a message."""


class InvalidProducerConfigError(StreamsparkException):
    """The producer's settings are inconsistent (e.g. a transactional producer without ``transactional.id``)."""


class KafkaProducerDeliveryError(BaseKafkaException):
    """The broker did not accept a produced message (reported after the produce call returned).

    Carries the librdkafka error and where the message was going:

    >>> err = KafkaProducerDeliveryError("Broker: Message size too large", topic="out", partition=0, key=b"k")
    >>> str(err)
    'Delivery of a message to topic "out" partition 0 failed: Broker: Message size too large'
    >>> err.key
    b'k'
    >>> import pickle; str(pickle.loads(pickle.dumps(err))) == str(err)
    True
    """

    def __init__(self, error: Any, topic: Optional[str], partition: Optional[int], key: Optional[bytes] = None) -> None:
        where = f'topic "{topic}"' + (f" partition {partition}" if partition is not None and partition >= 0 else "")
        StreamsparkException.__init__(self, f"Delivery of a message to {where} failed: {error}")
        self.error = error
        self.topic = topic
        self.partition = partition
        self.key = key

    def __str__(self) -> str:  # names where the message was going (the reference's shows only the error)
        return Exception.__str__(self)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({str(self)!r})"

    def __reduce__(self) -> tuple[Any, ...]:  # rebuilt from its fields (a worker ships it to the driver)
        return (type(self), (self.error, self.topic, self.partition, self.key))
