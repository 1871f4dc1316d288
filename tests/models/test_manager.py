"""TopicManager in-process, over an admin that records instead of calling a broker."""

from __future__ import annotations

import pytest

from streamspark.models import Topic, TopicAdmin, TopicConfig, TopicManager, TopicType
from streamspark.models.topics import TopicConfigurationMismatch, TopicNameLengthExceeded, TopicNotFoundError


class RecordingAdmin(TopicAdmin):
    """Topics "exist" once created; their broker config is the create config plus broker settings."""

    def __init__(self, existing: dict[str, TopicConfig] | None = None) -> None:
        super().__init__("127.0.0.1:1")
        self.existing = dict(existing or {})
        self.created: list[str] = []

    def create_topics(self, topics, timeout=30, finalize_timeout=60):
        for topic in topics:
            if topic.name not in self.existing:
                self.created.append(topic.name)
                cfg = topic.create_config
                self.existing[topic.name] = TopicConfig(
                    cfg.num_partitions,
                    cfg.replication_factor,
                    {**cfg.extra_config, "retention.ms": "604800000", "segment.bytes": "1073741824"},
                )

    def inspect_topics(self, topic_names, timeout=30):
        return {name: self.existing.get(name) for name in topic_names}


def test_topics_get_the_default_config_and_are_created_then_read_back():
    admin = RecordingAdmin()
    manager = TopicManager(admin, consumer_group="g")
    t = manager.topic("in")
    assert t.create_config == TopicConfig(1, 1, {}) and manager.topics == {"in": t}
    other = manager.register(Topic("out", create_config=TopicConfig(3, 1)))
    manager.ensure_topics()
    assert admin.created == ["in", "out"]
    # only the settings internal topics copy are kept from the broker's config
    assert t.broker_config == TopicConfig(1, 1, {"retention.ms": "604800000"})
    assert other.broker_config.num_partitions == 3


def test_topic_config_defaults():
    manager = TopicManager(RecordingAdmin(), consumer_group="g")
    assert manager.topic_config() == TopicConfig(1, 1, {})
    assert manager.topic_config(4, 2, {"retention.ms": "1"}) == TopicConfig(4, 2, {"retention.ms": "1"})
    manager.topic_config().extra_config["x"] = "y"
    assert TopicManager.default_extra_config == {}


def test_missing_topics_without_auto_create():
    admin = RecordingAdmin()
    admin.reachable = lambda timeout=1.0: True  # a broker answers: topics are looked up when defined
    manager = TopicManager(admin, consumer_group="g", auto_create_topics=False)
    with pytest.raises(TopicNotFoundError, match='"missing".*auto_create_topics'):
        manager.topic("missing")  # refused when defined, as in the reference
    admin.existing["there"] = TopicConfig(2, 1, {})
    assert manager.topic("there").broker_config.num_partitions == 2
    admin.existing["gone-later"] = TopicConfig(1, 1, {})
    manager.register(Topic("gone-later"))  # registered while it existed...
    del admin.existing["gone-later"]
    with pytest.raises(TopicNotFoundError, match='"gone-later".*auto_create_topics'):
        manager.ensure_topics()  # ...and looked up again when the application runs


def test_names_longer_than_255_characters_are_refused_before_creating():
    admin = RecordingAdmin()
    manager = TopicManager(admin, consumer_group="g")
    manager.register(Topic("x" * 256))
    with pytest.raises(TopicNameLengthExceeded, match="255 character limit"):
        manager.ensure_topics()
    assert admin.created == []


def test_names_longer_than_255_characters_are_refused_when_defined():
    with pytest.raises(TopicNameLengthExceeded, match="255 character limit"):
        TopicManager(RecordingAdmin(), consumer_group="g").topic("x" * 256)
    # without auto-creation the name is only looked up on the broker
    admin = RecordingAdmin()
    admin.reachable = lambda timeout=1.0: True
    admin.existing["y" * 256] = TopicConfig(1, 1, {})
    assert TopicManager(admin, consumer_group="g", auto_create_topics=False).topic("y" * 256).name == "y" * 256


def test_internal_topics_names_types_and_serializers():
    manager = TopicManager(RecordingAdmin(), consumer_group="g")
    src = manager.topic("src")
    rep = manager.repartition_topic("zone", "src", TopicConfig(2, 1))
    assert (rep.name, rep.topic_type, rep.is_repartition) == ("repartition__g--src--zone", TopicType.REPARTITION, True)
    assert rep.serialize(key="k", value={"a": 1}).key == b'"k"'  # JSON keys by default
    log = manager.changelog_topic(rep.name, "default", TopicConfig(2, 1))
    assert log.name == "changelog__g--repartition.src.zone--default"
    assert log.is_changelog and log.create_config.extra_config == {"cleanup.policy": "compact"}
    assert log.serialize(key=b"k", value=b"v").value == b"v"
    assert manager.changelog_topic(None, "s", TopicConfig(1, 1)).name == "changelog__g--s"
    assert manager.changelog_topics[rep.name] == {"default": log}
    assert manager.changelog_topics_list == [log, manager.changelog_topics[None]["s"]]
    assert manager.non_changelog_topics == {"src": src, rep.name: rep}
    assert set(manager.all_topics) == {"src", rep.name, log.name, "changelog__g--s"}
    assert manager.topics == {"src": src}


def test_a_changelog_with_another_partition_count_is_a_mismatch():
    admin = RecordingAdmin(existing={"changelog__g--src--default": TopicConfig(3, 1)})
    manager = TopicManager(admin, consumer_group="g")
    manager.changelog_topic("src", "default", TopicConfig(2, 1))
    with pytest.raises(TopicConfigurationMismatch, match="expected 2, got 3"):
        manager.ensure_topics()


def test_derive_topic_config_takes_the_largest_settings():
    a, b = Topic("a"), Topic("b")
    a.broker_config = TopicConfig(2, 1, {"retention.ms": "10", "retention.bytes": "100"})
    b.broker_config = TopicConfig(4, 3, {"retention.ms": "-1", "retention.bytes": "50"})
    assert TopicManager.derive_topic_config([a, b]) == TopicConfig(4, 3, {"retention.ms": "-1", "retention.bytes": "100"})
    with pytest.raises(ValueError):
        TopicManager.derive_topic_config([])


def test_stream_id_from_topics():
    manager = TopicManager(RecordingAdmin(), consumer_group="g")
    assert manager.stream_id_from_topics([Topic("b"), Topic("a")]) == "a--b"
    with pytest.raises(ValueError):
        manager.stream_id_from_topics([])
