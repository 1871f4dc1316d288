"""TopicAdmin and TopicManager against the real broker."""

from __future__ import annotations

import uuid

import pytest

from streamspark.exceptions import BrokerUnreachableError
from streamspark.models import Topic, TopicAdmin, TopicConfig, TopicManager
from streamspark.models.topics import TopicNotFoundError


def test_create_inspect_list(broker):
    admin = TopicAdmin(broker.address)
    name = f"adm-{uuid.uuid4().hex[:8]}"
    topic = Topic(name, create_config=TopicConfig(num_partitions=3, replication_factor=1))
    admin.create_topics([topic])
    admin.create_topics([topic])  # "already exists" is not an error
    found = admin.inspect_topics([name, "does-not-exist-" + name])
    assert found[name].num_partitions == 3
    assert found["does-not-exist-" + name] is None
    assert name in admin.list_topics(timeout=10)
    with pytest.raises(ValueError):
        admin.create_topics([topic], timeout=0)


def test_manager_validates_when_auto_create_is_off(broker):
    admin = TopicAdmin(broker.address)
    manager = TopicManager(admin, consumer_group="g", auto_create_topics=False)
    manager.topic(f"missing-{uuid.uuid4().hex[:8]}")
    with pytest.raises(TopicNotFoundError, match="auto_create_topics"):
        manager.ensure_topics()


def test_unreachable_broker_is_reported():
    admin = TopicAdmin("127.0.0.1:1", extra_config={"socket.timeout.ms": 1000})
    with pytest.raises(BrokerUnreachableError, match="127.0.0.1:1"):
        admin.list_topics(timeout=2)
