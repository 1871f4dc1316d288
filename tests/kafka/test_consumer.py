"""BaseConsumer and Consumer against the embedded broker (and their docstring examples)."""

from __future__ import annotations

import doctest
import time
import uuid

import pytest
from confluent_kafka import TopicPartition

import streamspark.kafka.consumer
from streamspark.kafka import BaseConsumer, Consumer


def test_docstring_examples():
    result = doctest.testmod(streamspark.kafka.consumer)
    assert result.attempted > 0 and result.failed == 0


def _consume(consumer, count):
    out, deadline = [], time.monotonic() + 30
    while len(out) < count and time.monotonic() < deadline:
        out += [m for m in consumer.consume(num_messages=count - len(out), timeout=1) if m.error() is None]
    return out


def test_base_consumer_reads_stores_commits_and_closes(kafka):
    topic = kafka.new_topic()
    kafka.produce(topic, [{"value": b"a"}, {"value": b"b"}, {"value": b"c"}])
    group = f"g-{uuid.uuid4().hex[:8]}"
    # the arguments win over extra_config: the bogus address there is not used
    consumer = BaseConsumer(
        kafka.address, group, "earliest", auto_commit_enable=False, extra_config={"bootstrap.servers": "127.0.0.1:1"}
    )
    consumer.assign([TopicPartition(topic, 0, 0)])
    messages = _consume(consumer, 3)
    assert [m.value() for m in messages] == [b"a", b"b", b"c"]
    assert consumer.get_watermark_offsets(TopicPartition(topic, 0), timeout=10) == (0, 3)
    assert consumer.position([TopicPartition(topic, 0)])[0].offset == 3
    consumer.store_offsets(message=messages[1])
    consumer.commit(asynchronous=False)
    assert kafka.committed(group, topic) == {0: 2}  # the next offset to read
    consumer.commit(offsets=[TopicPartition(topic, 0, 3)], asynchronous=False)
    assert consumer.committed([TopicPartition(topic, 0)], timeout=10)[0].offset == 3
    consumer.close()
    with pytest.raises(RuntimeError, match="closed"):
        consumer.poll(0)


def test_consumer_subscribes_with_rebalance_callbacks(kafka):
    topic = kafka.new_topic(partitions=2)
    kafka.produce(topic, [{"value": b"x", "partition": 1}])
    assigned = []
    with Consumer(kafka.address, f"g-{uuid.uuid4().hex[:8]}", "earliest") as consumer:
        consumer.subscribe([topic], on_assign=lambda _, partitions: assigned.extend(p.partition for p in partitions))
        assert [m.value() for m in _consume(consumer, 1)] == [b"x"]
    assert sorted(assigned) == [0, 1]


def test_subscribe_refuses_a_single_topic_name():
    consumer = Consumer("127.0.0.1:1", "g", "earliest")
    with pytest.raises(TypeError, match="list of topic names"):
        consumer.subscribe("readings")  # type: ignore[arg-type]
    consumer.close()


def test_range_assignment_by_default():
    assert BaseConsumer("127.0.0.1:1", "g", "earliest")._config["partition.assignment.strategy"] == "range"
    custom = BaseConsumer("127.0.0.1:1", "g", "earliest", extra_config={"partition.assignment.strategy": "cooperative-sticky"})
    assert custom._config["partition.assignment.strategy"] == "cooperative-sticky"


def test_an_exception_in_a_rebalance_callback_leaves_poll_as_partition_assignment_error(kafka):
    from streamspark.exceptions import PartitionAssignmentError

    topic = kafka.new_topic()
    kafka.produce(topic, [{"value": b"x"}])
    with Consumer(kafka.address, f"g-{uuid.uuid4().hex[:8]}", "earliest") as consumer:
        consumer.subscribe([topic], on_assign=lambda _, partitions: 1 / 0)
        with pytest.raises(PartitionAssignmentError, match="Error during partition assignment") as info:
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:
                consumer.poll(0.5)
        assert isinstance(info.value.__cause__, ZeroDivisionError)


def test_store_offsets_takes_a_message_or_offsets_not_both():
    consumer = Consumer("127.0.0.1:1", "g", "earliest")
    with pytest.raises(ValueError, match='"message" and "offsets" are mutually exclusive'):
        consumer.store_offsets(message=object(), offsets=[TopicPartition("t", 0, 1)])  # type: ignore[arg-type]
    consumer.close()


def test_extra_config_may_store_offsets_automatically(kafka):
    """As the reference's ``get_consumer`` suggests: ``enable.auto.offset.store`` in the
    consumer settings commits what was polled, without ``store_offsets``."""
    topic = kafka.new_topic()
    kafka.produce(topic, [{"value": b"%d" % i} for i in range(5)])
    group = f"g-{uuid.uuid4().hex[:8]}"
    consumer = BaseConsumer(kafka.address, group, "earliest", extra_config={"enable.auto.offset.store": True})
    assert consumer._config["enable.auto.offset.store"] is True
    consumer.assign([TopicPartition(topic, 0, 0)])
    assert len(_consume(consumer, 5)) == 5
    consumer.commit(asynchronous=False)
    consumer.close()
    assert kafka.committed(group, topic) == {0: 5}
    assert BaseConsumer("127.0.0.1:1", "g", "earliest")._config["enable.auto.offset.store"] is False


def test_raise_for_msg_error_and_the_reference_text_of_consumer_errors():
    from confluent_kafka import KafkaError

    from streamspark.kafka import raise_for_msg_error
    from streamspark.kafka.exceptions import KafkaConsumerException

    class Message:
        def __init__(self, error):
            self._error = error

        def error(self):
            return self._error

    ok = Message(None)
    assert raise_for_msg_error(ok) is ok
    with pytest.raises(KafkaConsumerException) as info:
        raise_for_msg_error(Message(KafkaError(1, "x")))
    assert str(info.value) == '<KafkaConsumerException code="1" description="x">'
