"""Type aliases for hints: message headers and a topic partition.

>>> from streamspark.types import Headers, TopicPartition
>>> headers: Headers = {"source": b"sensor-1"}
"""

from __future__ import annotations

from typing import Dict, List, Protocol, Tuple, Union

from .models.types import HeaderValue

__all__ = ("TopicPartition", "HeaderValue", "Headers")

#: Headers as a list of ``(name, value)`` pairs or a dict of them.
Headers = Union[List[Tuple[str, HeaderValue]], Dict[str, HeaderValue]]


class TopicPartition(Protocol):
    """Anything with a topic, a partition and an offset (e.g. ``confluent_kafka.TopicPartition``)."""

    topic: str
    partition: int
    offset: int
