"""Small helpers the database sinks share: keys as text, metadata columns, dict checks."""

from __future__ import annotations

from typing import Any, Optional

from ..base.batch import SinkBatch
from ..base.item import SinkItem
from ..base.sink import ClientConnectFailureCallback, ClientConnectSuccessCallback

__all__ = ("key_text", "require_dict", "require_dict_value", "DictValuesOnly", "with_metadata", "pop_connect_callbacks")


def pop_connect_callbacks(
    kwargs: dict[str, Any],
) -> tuple[Optional[ClientConnectSuccessCallback], Optional[ClientConnectFailureCallback]]:
    """Take ``on_client_connect_success``/``_failure`` out of a sink's ``**kwargs`` (the rest go
    to its client library)."""
    return kwargs.pop("on_client_connect_success", None), kwargs.pop("on_client_connect_failure", None)


def key_text(key: Any) -> Any:
    """A message key as text (bytes decoded as UTF-8); None and other types unchanged."""
    if isinstance(key, (bytes, bytearray)):
        return bytes(key).decode("utf-8", errors="replace")
    return key


def require_dict_value(sink: object, value: Any) -> None:
    """Refuse a non-dict value as the record reaches a sink that writes columns (its ``add``),
    so that it fails as a processing error of that record, as in Quix Streams.

    >>> require_dict_value(object(), 5)
    Traceback (most recent call last):
    TypeError: Sink "object" supports only dictionaries, got <class 'int'>
    """
    if not isinstance(value, dict):
        raise TypeError(f'Sink "{type(sink).__name__}" supports only dictionaries, got {type(value)}')


class DictValuesOnly:
    """Mixin for a sink that writes a record's fields as columns, placed before its
    ``BatchingSink`` base: ``add`` refuses a non-dict value (:func:`require_dict_value`)."""

    def add(self, value: Any, key: Any, timestamp: int, headers: Any, topic: str, partition: int, offset: int) -> None:
        """Take one record: its value must be a dict (``TypeError`` otherwise, a processing error)."""
        require_dict_value(self, value)
        super().add(value, key, timestamp, headers, topic, partition, offset)  # type: ignore[misc]


def require_dict(sink: str, item: SinkItem, batch: SinkBatch) -> dict:
    if not isinstance(item.value, dict):
        raise TypeError(
            f"{sink} accepts dict values only, got {type(item.value).__name__} at {batch.topic}[{batch.partition}]@{item.offset}"
        )
    return item.value


def with_metadata(value: dict, item: SinkItem, batch: SinkBatch, message: bool, topic: bool) -> dict:
    """``value`` plus ``__key/__timestamp/__headers`` (message) and ``__topic/__partition/__offset``."""
    if not (message or topic):
        return value
    value = dict(value)
    if message:
        value["__key"] = key_text(item.key)
        value["__timestamp"] = item.timestamp
        value["__headers"] = {k: key_text(v) for k, v in item.headers} if item.headers else {}
    if topic:
        value["__topic"] = batch.topic
        value["__partition"] = batch.partition
        value["__offset"] = item.offset
    return value
