"""Errors of the Kafka clients."""

from __future__ import annotations

from typing import Any, Optional

from ..exceptions import StreamsparkException

__all__ = ("KafkaProducerDeliveryError",)


class KafkaProducerDeliveryError(StreamsparkException):
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
        super().__init__(f"Delivery of a message to {where} failed: {error}")
        self.error = error
        self.topic = topic
        self.partition = partition
        self.key = key

    def __reduce__(self) -> tuple[Any, ...]:  # rebuilt from its fields (a worker ships it to the driver)
        return (type(self), (self.error, self.topic, self.partition, self.key))
