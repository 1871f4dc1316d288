"""Partition assignment errors.

>>> from streamspark.exceptions.assignment import PartitionAssignmentError
>>> issubclass(PartitionAssignmentError, QuixException)
True
"""

from __future__ import annotations

from .base import QuixException

__all__ = ("PartitionAssignmentError", "KafkaPartitionError")


class PartitionAssignmentError(QuixException):
    """Topic partitions could not be assigned or planned."""


class KafkaPartitionError(QuixException):
    """A Kafka partition is in a state the operation cannot handle."""
