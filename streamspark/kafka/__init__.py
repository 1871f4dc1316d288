"""Thin wrappers over confluent-kafka: connection settings, producer, consumers.

>>> from streamspark.kafka import ConnectionConfig, Producer, BaseConsumer, Consumer
"""

from .configuration import ConnectionConfig
from .consumer import AutoOffsetReset, BaseConsumer, Consumer, RebalancingCallback, raise_for_msg_error
from .producer import PRODUCER_ON_ERROR_RETRIES, PRODUCER_POLL_TIMEOUT, Producer

__all__ = (
    "ConnectionConfig",
    "Producer",
    "BaseConsumer",
    "Consumer",
    "AutoOffsetReset",
    "RebalancingCallback",
    "raise_for_msg_error",
    "PRODUCER_ON_ERROR_RETRIES",
    "PRODUCER_POLL_TIMEOUT",
)
