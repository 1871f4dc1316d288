"""The default error callbacks: what they log, and that they stop the app (return False)."""

from __future__ import annotations

import logging

import pytest

from streamspark.error_callbacks import (
    default_on_consumer_error,
    default_on_processing_error,
    default_on_producer_error,
)
from streamspark.models import MessageContext
from streamspark.models.rows import Row


class _RawMessage:
    def topic(self) -> str:
        return "in"

    def partition(self) -> int:
        return 2

    def offset(self) -> int:
        return 41


def _row() -> Row:
    ctx = MessageContext(key=b"k", topic="in", partition=3, offset=7, size=0, timestamp=1)
    return Row(value={"a": 1}, key=b"k", timestamp=1, context=ctx, headers=None)


@pytest.mark.parametrize(
    "callback, source, message",
    [
        (default_on_consumer_error, _RawMessage(), 'Failed to consume a message from Kafka: partition="in[2]" offset="41"'),
        (default_on_consumer_error, None, 'Failed to consume a message from Kafka: partition="None[None]" offset="None"'),
        (default_on_processing_error, _row(), 'Failed to process a Row: partition="in[3]" offset="7"'),
        (default_on_producer_error, _row(), 'Failed to produce a message to Kafka: partition="in[3]" offset="7"'),
        (default_on_producer_error, None, 'Failed to produce a message to Kafka: partition="None[None]" offset="None"'),
    ],
)
def test_default_callbacks_log_the_reference_message_and_stop(callback, source, message, caplog):
    logger = logging.getLogger("streamspark.test")
    exc = ValueError("boom")
    with caplog.at_level(logging.ERROR, logger="streamspark.test"):
        assert callback(exc, source, logger) is False
    [record] = caplog.records
    assert record.getMessage() == message
    assert record.exc_info is not None and record.exc_info[1] is exc
