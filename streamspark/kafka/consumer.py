"""A Kafka consumer wrapper: the committed offset is the *next* offset to read."""

from __future__ import annotations

import logging
from typing import Any, Optional, Union

import confluent_kafka

from .configuration import ConnectionConfig
from .producer import broker_config

__all__ = ("Consumer",)


class Consumer(confluent_kafka.Consumer):
    """A confluent-kafka ``Consumer`` built from streamspark's settings; usable as a context manager.

    Offsets are not stored automatically (``enable.auto.offset.store=False``): call
    ``store_offsets(message)`` after processing a message.

    >>> with Consumer("127.0.0.1:9092", "group", "earliest") as consumer:  # doctest: +SKIP
    ...     consumer.subscribe(["topic"])
    """

    def __init__(
        self,
        broker_address: Union[str, ConnectionConfig],
        consumer_group: Optional[str],
        auto_offset_reset: str = "latest",
        auto_commit_enable: bool = True,
        extra_config: Optional[dict[str, Any]] = None,
        logger: Optional[logging.Logger] = None,
    ) -> None:
        config = {
            **broker_config(broker_address),
            "group.id": consumer_group or "streamspark-default",
            "auto.offset.reset": auto_offset_reset,
            "enable.auto.commit": auto_commit_enable,
            "enable.auto.offset.store": False,
            **(extra_config or {}),
        }
        super().__init__(config)

    def __enter__(self) -> "Consumer":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
