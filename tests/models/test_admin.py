"""TopicAdmin and TopicManager against the real broker."""

from __future__ import annotations

import uuid

import pytest

from streamspark.exceptions import BrokerUnreachableError
from streamspark.models import Topic, TopicAdmin, TopicConfig, TopicManager
from streamspark.models.topics import TopicConfigurationError, TopicNotFoundError


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
    """As in the reference, a missing topic is refused when it is defined."""
    admin = TopicAdmin(broker.address)
    manager = TopicManager(admin, consumer_group="g", auto_create_topics=False)
    with pytest.raises(TopicNotFoundError, match="auto_create_topics"):
        manager.topic(f"missing-{uuid.uuid4().hex[:8]}")


def test_a_topic_is_created_when_defined_and_its_broker_config_read(broker, kafka):
    """As in the reference: a program can produce to a topic it just defined, into the
    partitions its config asks for (the broker's auto-creation would give it one)."""
    admin = TopicAdmin(broker.address)
    manager = TopicManager(admin, consumer_group="g")
    name = f"defined-{uuid.uuid4().hex[:8]}"
    topic = manager.topic(name, create_config=TopicConfig(num_partitions=3, replication_factor=1))
    assert topic.broker_config.num_partitions == 3
    assert admin.inspect_topics([name])[name].num_partitions == 3
    kafka.produce(name, [{"value": b"v", "key": b"k", "partition": 2}])
    assert len(kafka.consume(name, expected=1)) == 1


def test_no_broker_yet_leaves_the_topic_to_the_run():
    admin = TopicAdmin("127.0.0.1:1")
    manager = TopicManager(admin, consumer_group="g", auto_create_topics=False)
    topic = manager.topic("later")
    assert manager.topics == {"later": topic}
    with pytest.raises(TopicConfigurationError):
        topic.broker_config


def test_unreachable_broker_is_reported():
    admin = TopicAdmin("127.0.0.1:1", extra_config={"socket.timeout.ms": 1000})
    with pytest.raises(BrokerUnreachableError, match="127.0.0.1:1"):
        admin.list_topics(timeout=2)


class _Meta:
    """What ``AdminClient.list_topics()`` gives: ``.topics`` of partition metadata with replicas."""

    def __init__(self, names):
        replica = type("Partition", (), {"replicas": [1]})()
        self.topics = {name: type("TopicMeta", (), {"partitions": {0: replica}})() for name in names}


class _DeniedClient:
    """An admin client whose broker denies describing and creating topics."""

    @staticmethod
    def _denied():
        from concurrent.futures import Future

        from confluent_kafka import KafkaError, KafkaException

        fut: Future = Future()
        fut.set_exception(KafkaException(KafkaError(KafkaError.TOPIC_AUTHORIZATION_FAILED)))
        return fut

    def list_topics(self, timeout=-1):
        return _Meta(["secret"])

    def describe_configs(self, resources, request_timeout=30):
        return {resource: self._denied() for resource in resources}

    def create_topics(self, new_topics, **kwargs):
        return {t.topic: self._denied() for t in new_topics}


class _DeniedAdmin(TopicAdmin):
    @property
    def admin_client(self):
        return _DeniedClient()


def test_denied_access_is_a_permission_error_or_creation_failure():
    from streamspark.models.topics import CreateTopicFailure, TopicPermissionError

    admin = _DeniedAdmin("127.0.0.1:1")
    with pytest.raises(TopicPermissionError, match='"secret".*DescribeConfigs'):
        admin.inspect_topics(["secret", "absent"])
    with pytest.raises(CreateTopicFailure, match='"new".*"Create" and "Read"'):
        admin.create_topics([Topic("new")])


def test_admin_pickles_without_its_client():
    import pickle

    admin = TopicAdmin("127.0.0.1:1", extra_config={"socket.timeout.ms": 1000})
    assert admin.admin_client is admin.admin_client  # created once
    copy = pickle.loads(pickle.dumps(admin))
    assert copy.admin_client is not admin.admin_client


def test_a_listener_that_does_not_speak_kafka_is_waited_for_once(caplog):
    """A TCP listener that never answers (a wrong port, a proxy): the first definition waits
    for the timeout and warns, the next ones do not wait again; the run looks them up."""
    import socket

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    try:
        admin = TopicAdmin(f"127.0.0.1:{listener.getsockname()[1]}")
        assert admin.reachable()
        asked = []
        inspect = admin.inspect_topics
        admin.inspect_topics = lambda names, timeout=30: asked.append(names) or inspect(names, timeout)
        manager = TopicManager(admin, consumer_group="g", timeout=1)
        with caplog.at_level("WARNING", logger="streamspark"):
            manager.topic("a")
        assert "looked up when the application runs" in caplog.text
        manager.topic("b")
        assert asked == [["a"]], "the broker is asked once, not once per topic"
        assert sorted(manager.topics) == ["a", "b"]
    finally:
        listener.close()
