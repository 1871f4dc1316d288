from __future__ import annotations

from streamspark.models import MessageContext
from streamspark.models.rows import RawMessage, Row


def test_raw_message_has_the_confluent_message_accessors():
    msg = RawMessage("t", 1, 9, b"k", b"value", [("h", b"1")], 1000, 1)
    assert (msg.topic(), msg.partition(), msg.offset(), msg.key(), msg.value()) == ("t", 1, 9, b"k", b"value")
    assert (msg.headers(), msg.timestamp(), len(msg)) == ([("h", b"1")], (1, 1000), 5)
    assert (msg.error(), msg.leader_epoch(), msg.latency()) == (None, None, None)
    assert len(RawMessage("t", 0, 0, None, None, None, 0, 0)) == 0


def test_row_reads_its_context():
    ctx = MessageContext(key=b"k", topic="t", partition=3, offset=4, size=12, timestamp=5, leader_epoch=2)
    row = Row(value={"a": 1}, key=b"k", timestamp=5, context=ctx, headers=[])
    assert (row.topic, row.partition, row.offset, row.size, row.leader_epoch) == ("t", 3, 4, 12, 2)


def test_message_context_takes_the_reference_s_parameters_in_its_order():
    ctx = MessageContext("t", 3, 4, 12, 2)
    assert (ctx.topic, ctx.partition, ctx.offset, ctx.size, ctx.leader_epoch) == ("t", 3, 4, 12, 2)
    assert (ctx.key, ctx.timestamp, ctx.headers) == (None, None, None)
