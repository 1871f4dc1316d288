"""Thin wrappers over confluent-kafka: connection settings, producer, consumers.

>>> from streamspark.kafka import ConnectionConfig, Producer, BaseConsumer, Consumer
"""

from .configuration import ConnectionConfig
from .consumer import BaseConsumer, Consumer
from .producer import Producer

__all__ = ("ConnectionConfig", "Producer", "BaseConsumer", "Consumer")
