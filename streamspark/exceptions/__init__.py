"""Exceptions shared by every layer of streamspark.

The names mirror the reference library so migrating code keeps its ``except`` clauses.

>>> from streamspark.exceptions import QuixException, PartitionAssignmentError
"""

from .assignment import KafkaPartitionError, PartitionAssignmentError
from .base import BrokerUnreachableError, InvalidTopology, ProcessingError, QuixException, StreamsparkException

__all__ = (
    "StreamsparkException",
    "QuixException",
    "PartitionAssignmentError",
    "KafkaPartitionError",
    "BrokerUnreachableError",
    "ProcessingError",
    "InvalidTopology",
)
