"""Type aliases for message parts, and the interface of a consumed Kafka message."""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Protocol, Tuple, Union

__all__ = (
    "HeaderValue",
    "HeadersValue",
    "HeadersTuple",
    "HeadersTuples",
    "HeadersMapping",
    "Headers",
    "KafkaHeaders",
    "MessageKey",
    "MessageValue",
    "RawConfluentKafkaMessageProto",
    "SuccessfulConfluentKafkaMessageProto",
)

HeaderValue = Optional[Union[str, bytes]]
HeadersValue = HeaderValue
HeadersTuple = Tuple[str, HeaderValue]
HeadersTuples = List[HeadersTuple]
HeadersMapping = Dict[str, HeaderValue]
Headers = Optional[HeadersTuples]
#: headers as confluent-kafka gives them: None when a message has none
KafkaHeaders = Optional[List[Tuple[str, bytes]]]
MessageKey = Any
MessageValue = Any


class RawConfluentKafkaMessageProto(Protocol):
    """The interface of ``confluent_kafka.Message``, which Python code cannot create; a test
    can build any object with these methods (e.g. ``streamspark.models.rows.RawMessage``).
    ``error()`` is a ``KafkaError`` for a failed poll."""

    def headers(self, *args: Any, **kwargs: Any) -> KafkaHeaders: ...

    def key(self, *args: Any, **kwargs: Any) -> Optional[Union[str, bytes]]: ...

    def offset(self, *args: Any, **kwargs: Any) -> Optional[int]: ...

    def partition(self, *args: Any, **kwargs: Any) -> Optional[int]: ...

    def timestamp(self, *args: Any, **kwargs: Any) -> Tuple[int, int]: ...

    def topic(self, *args: Any, **kwargs: Any) -> str: ...

    def value(self, *args: Any, **kwargs: Any) -> Optional[Union[str, bytes]]: ...

    def latency(self, *args: Any, **kwargs: Any) -> Optional[float]: ...

    def leader_epoch(self, *args: Any, **kwargs: Any) -> Optional[int]: ...

    def error(self) -> Any: ...

    def __len__(self) -> int: ...


class SuccessfulConfluentKafkaMessageProto(Protocol):
    """The interface of a ``confluent_kafka.Message`` without an error: what
    ``Topic.row_deserialize()`` and ``Topic.deserialize()`` take."""

    def headers(self, *args: Any, **kwargs: Any) -> KafkaHeaders: ...

    def key(self, *args: Any, **kwargs: Any) -> Optional[Union[str, bytes]]: ...

    def offset(self, *args: Any, **kwargs: Any) -> int: ...

    def partition(self, *args: Any, **kwargs: Any) -> int: ...

    def timestamp(self, *args: Any, **kwargs: Any) -> Tuple[int, int]: ...

    def topic(self, *args: Any, **kwargs: Any) -> str: ...

    def value(self, *args: Any, **kwargs: Any) -> Optional[Union[str, bytes]]: ...

    def latency(self, *args: Any, **kwargs: Any) -> Optional[float]: ...

    def leader_epoch(self, *args: Any, **kwargs: Any) -> Optional[int]: ...

    def error(self) -> None: ...

    def __len__(self) -> int: ...
