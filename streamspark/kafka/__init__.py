"""Thin wrappers over confluent-kafka: connection settings, producer, consumer."""

from .configuration import ConnectionConfig
from .consumer import Consumer
from .producer import Producer

__all__ = ("ConnectionConfig", "Producer", "Consumer")
