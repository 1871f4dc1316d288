"""The Kafka source ends a micro-batch of topics that meet in timestamp order at a common time
(real broker)."""

from __future__ import annotations

from typing import Optional

import pytest

from streamspark.engine._kafka_source import _KafkaStreamReader, source_options


@pytest.fixture
def planner(source_planner):
    """Readers planning over the test broker, every topic aligned unless ``aligned`` names them."""

    def make(topics: list[str], cap: int, aligned: Optional[list[str]] = None) -> _KafkaStreamReader:
        return source_planner(topics, cap, aligned_topics=topics if aligned is None else aligned)

    return make


def _produce(kafka, topic: str, stamps: list[int], partition: int = 0) -> None:
    kafka.produce(topic, [{"value": b"v", "timestamp": ts, "partition": partition} for ts in stamps])


def test_capped_partitions_end_at_the_earliest_of_their_last_timestamps(kafka, planner):
    fast, slow = kafka.new_topic(), kafka.new_topic()
    _produce(kafka, fast, [1000 + i for i in range(10)])  # 10 records over 10 ms
    _produce(kafka, slow, [1000 + 100 * i for i in range(10)])  # 10 records over 900 ms
    reader = planner([fast, slow], cap=4)
    start = {fast: {"0": 0}, slow: {"0": 0}}
    # capped at 4 each: the last records are stamped 1003 and 1300, so the slow topic ends
    # before its first record stamped after 1003 (offset 1, stamped 1100)
    end = reader.latestOffset(start, None)
    assert end == {fast: {"0": 4}, slow: {"0": 1}}
    # the fast topic defines the time again (1007): the slow one waits, never below its start
    end = reader.latestOffset(end, None)
    assert end == {fast: {"0": 8}, slow: {"0": 1}}
    # the fast topic's rest is not capped: the slow one (capped, last record 1400) sets the
    # time, and nothing of the fast topic is stamped after it
    end = reader.latestOffset(end, None)
    assert end == {fast: {"0": 10}, slow: {"0": 5}}
    # nothing capped any more: each partition takes what the cap allows
    assert reader.latestOffset(end, None) == {fast: {"0": 10}, slow: {"0": 9}}


def test_uncapped_partitions_are_cut_too_and_the_defining_partition_keeps_its_cap(kafka, planner):
    left, right = kafka.new_topic(partitions=2), kafka.new_topic(partitions=2)
    _produce(kafka, left, [1000, 2000, 3000], partition=0)  # not capped
    _produce(kafka, left, [1500, 1600], partition=1)  # not capped
    # capped at 3: the last record included is stamped 500, out of order (a later record is
    # stamped earlier): this partition defines the time and keeps its 3 records all the same
    _produce(kafka, right, [100, 1700, 500, 400, 4000], partition=0)
    reader = planner([left, right], cap=3)
    start = {left: {"0": 0, "1": 0}, right: {"0": 0, "1": 0}}
    # T = 500: left partition 0 ends before 1000, partition 1 before 1500 (nothing of them)
    assert reader.latestOffset(start, None) == {left: {"0": 0, "1": 0}, right: {"0": 3, "1": 0}}


def test_only_the_aligned_topics_are_cut(kafka, planner):
    fast, slow, other = kafka.new_topic(), kafka.new_topic(), kafka.new_topic()
    _produce(kafka, fast, [1000 + i for i in range(6)])
    _produce(kafka, slow, [1000 + 100 * i for i in range(6)])
    _produce(kafka, other, [5000 + i for i in range(6)])
    start = {fast: {"0": 0}, slow: {"0": 0}, other: {"0": 0}}
    aligned = planner([fast, slow, other], cap=4, aligned=[fast, slow])
    assert aligned.latestOffset(start, None) == {fast: {"0": 4}, slow: {"0": 1}, other: {"0": 4}}
    # without aligned topics (a plan whose topics do not meet): the count caps only
    plain = planner([fast, slow, other], cap=4, aligned=[])
    assert "aligned_topics" not in source_options([fast], "earliest", 4, 10)
    assert plain.latestOffset(start, None) == {fast: {"0": 4}, slow: {"0": 4}, other: {"0": 4}}


def test_a_transaction_marker_at_the_end_of_a_capped_range_is_looked_past(kafka, planner):
    from confluent_kafka import Producer

    fast, slow = kafka.new_topic(), kafka.new_topic()
    _produce(kafka, fast, [1000 + 100 * i for i in range(10)])
    producer = Producer({"bootstrap.servers": kafka.address, "transactional.id": f"{slow}-writer"})
    producer.init_transactions(30)
    for stamps in ([1000, 1001, 1002], [1300, 1400, 1500]):  # records at offsets 0-2 and 4-6
        producer.begin_transaction()
        for ts in stamps:
            producer.produce(slow, value=b"v", timestamp=ts, partition=0)
        producer.commit_transaction(30)
    reader = planner([fast, slow], cap=4)
    # the slow topic's range 0-4 ends with the first transaction's marker (offset 3): its last
    # record is offset 2, stamped 1002, which sets the time for the fast topic
    assert reader.latestOffset({fast: {"0": 0}, slow: {"0": 0}}, None) == {fast: {"0": 1}, slow: {"0": 4}}
