"""Application construction, configuration and validation (no Spark needed)."""

from __future__ import annotations

import pydantic
import pytest

from streamspark import Application, ConnectionConfig
from streamspark.exceptions import StreamsparkException


def test_defaults_follow_the_reference():
    app = Application("127.0.0.1:9092", loglevel=None)
    cfg = app.config
    assert cfg.consumer_group == "quixstreams-default"
    assert cfg.auto_offset_reset == "latest"
    assert (cfg.commit_interval, cfg.commit_every) == (5.0, 0)
    assert str(cfg.state_dir) == "state"
    assert cfg.processing_guarantee == "at-least-once"
    assert cfg.spark_master == "local[*]"
    assert cfg.broker_address == ConnectionConfig(bootstrap_servers="127.0.0.1:9092")


def test_environment_variables(monkeypatch):
    monkeypatch.setenv("Quix__Broker__Address", "env-host:1")
    monkeypatch.setenv("Quix__Consumer_Group", "env-group")
    monkeypatch.setenv("Quix__State__Dir", "/tmp/env-state")
    app = Application(loglevel=None)
    assert app.config.broker_address.bootstrap_servers == "env-host:1"
    assert app.config.consumer_group == "env-group"
    assert str(app.config.state_dir) == "/tmp/env-state"
    # explicit arguments win
    assert Application("arg:2", consumer_group="g", loglevel=None).config.consumer_group == "g"


def test_config_is_immutable_and_copyable():
    cfg = Application("h:1", loglevel=None).config
    with pytest.raises(Exception):
        cfg.consumer_group = "x"  # type: ignore[misc]
    assert cfg.copy(consumer_group="other").consumer_group == "other"
    assert cfg.consumer_group == "quixstreams-default"


@pytest.mark.parametrize(
    "kwargs, error",
    [
        ({}, ValueError),
        ({"broker_address": "h:1", "auto_offset_reset": "middle"}, pydantic.ValidationError),
        ({"broker_address": "h:1", "processing_guarantee": "maybe"}, pydantic.ValidationError),
        ({"broker_address": "h:1", "commit_every": "often"}, pydantic.ValidationError),
        ({"quix_sdk_token": "t"}, StreamsparkException),
    ],
)
def test_invalid_arguments(kwargs, error, monkeypatch):
    monkeypatch.delenv("Quix__Broker__Address", raising=False)
    with pytest.raises(error):
        Application(loglevel=None, **kwargs)


def test_one_root_dataframe_per_topic_and_nothing_to_run():
    app = Application("h:1", loglevel=None)
    with pytest.raises(StreamsparkException, match="Nothing to run"):
        app.run(timeout=1)
    t = app.topic("t")
    app.dataframe(t)
    with pytest.raises(StreamsparkException, match="There is already a StreamingDataFrame using topic t"):
        app.dataframe(t)
    with pytest.raises(AttributeError):
        Application.Quix()


def test_clear_state_removes_the_checkpoint(tmp_path):
    app = Application("h:1", consumer_group="g", state_dir=str(tmp_path), loglevel=None)
    app.checkpoint_dir.mkdir(parents=True)
    (app.checkpoint_dir / "offsets").write_text("x")
    app.clear_state()
    assert not (tmp_path / "g").exists()


@pytest.mark.parametrize(
    "name, value, replacement",
    [
        ("rocksdb_options", object(), "spark.sql.streaming.stateStore.rocksdb"),
        ("use_changelog_topics", False, "Spark checkpoint"),
        ("quix_portal_api", "https://portal", "broker_address"),
        ("consumer_poll_timeout", 3.0, "commit_interval"),
        ("producer_poll_timeout", 1.0, "flushed at the end of every micro-batch"),
        ("max_partition_buffer_size", 5, "max_records_per_partition"),
    ],
)
def test_parameters_without_effect_warn_once_with_their_replacement(name, value, replacement, caplog, monkeypatch):
    import streamspark.app as app_module

    monkeypatch.setattr(app_module, "_warned_ignored", set())
    with caplog.at_level("WARNING", logger="streamspark"):
        Application("h:1", loglevel=None, **{name: value})
        Application("h:1", loglevel=None, **{name: value})
    warnings = [r.getMessage() for r in caplog.records if f"Application({name}=...)" in r.getMessage()]
    assert len(warnings) == 1
    assert replacement in warnings[0] and "no effect" in warnings[0]


def test_parameters_at_their_defaults_do_not_warn(caplog, monkeypatch):
    import streamspark.app as app_module

    monkeypatch.setattr(app_module, "_warned_ignored", set())
    with caplog.at_level("WARNING", logger="streamspark"):
        Application("h:1", loglevel=None, use_changelog_topics=True, consumer_poll_timeout=1.0)
    assert "no effect" not in caplog.text


def test_a_cluster_master_with_a_state_dir_not_declared_shared_fails_at_start(tmp_path, monkeypatch):
    import streamspark.engine.masters as masters

    monkeypatch.setattr(masters, "running_session", lambda: None)  # as in a program of its own
    # an address nothing listens on: the run fails before it reaches the broker or starts Spark
    app = Application("127.0.0.1:1", spark_master="spark://spark-master:7077", state_dir=tmp_path / "state", loglevel=None)
    app.dataframe(app.topic("readings"))
    with pytest.raises(StreamsparkException, match="state_dir_shared=True"):
        app.run(timeout=1)


def test_state_dir_shared_is_declared_by_argument_or_environment(monkeypatch):
    assert Application("h:1", loglevel=None).config.state_dir_shared is False
    assert Application("h:1", state_dir_shared=True, loglevel=None).config.state_dir_shared is True
    monkeypatch.setenv("Streamspark__State__Shared", "true")
    assert Application("h:1", loglevel=None).config.state_dir_shared is True
    assert Application("h:1", state_dir_shared=False, loglevel=None).config.state_dir_shared is False


def test_invalid_choices_are_validation_errors_naming_the_field():
    with pytest.raises(pydantic.ValidationError, match="processing_guarantee") as info:
        Application("h:1", processing_guarantee="exactly_once", loglevel=None)
    assert isinstance(info.value, ValueError)
    with pytest.raises(pydantic.ValidationError, match="auto_offset_reset"):
        Application("h:1", auto_offset_reset="beginning", loglevel=None)


def test_numbers_given_as_strings_are_converted():
    cfg = Application("h:1", commit_interval="2", commit_every="3", request_timeout="4", loglevel=None).config
    assert (cfg.commit_interval, cfg.commit_every, cfg.request_timeout) == (2.0, 3, 4.0)
    # no cap of the application's: the engine lowers its default to commit_every
    assert cfg.max_records_per_partition is None
    capped = Application("h:1", commit_every="3", max_records_per_partition="10", loglevel=None).config
    assert capped.max_records_per_partition == 3


@pytest.mark.parametrize("cap", [0, -5])
def test_a_cap_of_records_per_micro_batch_must_be_positive(cap):
    with pytest.raises(pydantic.ValidationError, match="max_records_per_partition"):
        Application("h:1", max_records_per_partition=cap, loglevel=None)


def test_copy_validates_the_changes():
    cfg = Application("h:1", loglevel=None).config
    with pytest.raises(pydantic.ValidationError, match="auto_offset_reset"):
        cfg.copy(auto_offset_reset="bogus")
    assert cfg.copy(commit_interval="7").commit_interval == 7.0


def test_reference_config_fields_and_properties():
    cfg = Application("h:1", loglevel=None).config
    assert (cfg.consumer_group_prefix, cfg.exactly_once, cfg.use_changelog_topics, cfg.rocksdb_options) == ("", False, True, None)
    eos = Application("h:1", processing_guarantee="exactly-once", use_changelog_topics=False, loglevel=None)
    assert eos.config.exactly_once is True and eos.config.use_changelog_topics is False
    assert eos.is_quix_app is False


def test_producers_default_to_idempotence_and_the_java_partitioner():
    assert Application("h:1", loglevel=None).config.producer_extra_config == {
        "enable.idempotence": True,
        "partitioner": "murmur2",
    }
    custom = Application("h:1", producer_extra_config={"partitioner": "consistent_random", "linger.ms": 1}, loglevel=None)
    assert custom.config.producer_extra_config == {
        "enable.idempotence": True,
        "partitioner": "consistent_random",
        "linger.ms": 1,
    }


def test_a_broker_address_wins_over_quix_cloud_settings(monkeypatch, caplog):
    monkeypatch.setenv("Quix__Sdk__Token", "env-token")
    with caplog.at_level("WARNING", logger="streamspark"):
        app = Application("h:1", loglevel=None)
    assert app.config.broker_address.bootstrap_servers == "h:1"
    assert "quix_sdk_token" in caplog.text
    assert Application("h:1", quix_sdk_token="t", loglevel=None).config.broker_address.bootstrap_servers == "h:1"
    monkeypatch.delenv("Quix__Broker__Address", raising=False)
    with pytest.raises(StreamsparkException, match="Quix Cloud is not supported"):
        Application(loglevel=None)


def test_count_needs_a_dataframe():
    from streamspark.sources import Source

    class Idle(Source):
        def run(self) -> None:
            pass

    app = Application("127.0.0.1:1", loglevel=None)
    app.add_source(Idle(name="idle"))
    with pytest.raises(ValueError, match="count"):
        app.run(count=1)


def test_broker_address_as_a_mapping_of_connection_settings_or_refused_clearly():
    app = Application(broker_address={"bootstrap_servers": "a:1", "security_protocol": "plaintext"}, consumer_group="g")
    assert app.config.broker_address.bootstrap_servers == "a:1"
    with pytest.raises(ValueError, match="broker_address must be a str .* not int"):
        Application(broker_address=123, consumer_group="g")  # type: ignore[arg-type]


def test_config_as_dict_gives_the_set_values_under_dotted_names():
    config = Application(broker_address="a:1", consumer_group="g", commit_every=7).config
    values = config.as_dict()
    assert values["consumer.group"] == "g" and values["commit.every"] == 7 and values["auto.offset.reset"] == "latest"
    assert "max.records.per.partition" not in values  # None: not set
    assert config.as_dict(include={"commit_interval"}) == {"commit.interval": 5.0}


def test_newer_quix_streams_parameters_are_accepted_with_a_warning(caplog, monkeypatch):
    import streamspark.app as app_module

    monkeypatch.setattr(app_module, "_warned_ignored", set())
    with caplog.at_level("WARNING", logger="streamspark"):
        app = Application(
            broker_address="a:1",
            consumer_group="g",
            state_recovery_offset_reset="latest",
            broker_availability_timeout=5,
            auto_recover_from_source_offset_out_of_range=False,
            loglevel=None,
        )
    assert app.config.consumer_group == "g"
    for name in ("state_recovery_offset_reset", "broker_availability_timeout", "auto_recover_from_source_offset_out_of_range"):
        assert f"Application({name}=...) has no effect" in caplog.text
    with pytest.raises(ValueError, match="broker_availability_timeout must be >= 0, got -1"):
        Application(broker_address="a:1", consumer_group="g", broker_availability_timeout=-1, loglevel=None)
