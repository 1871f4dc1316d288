"""``Application``: configuration, topics, dataframes and the run loop.

>>> from streamspark import Application
>>> app = Application(broker_address="127.0.0.1:9092", consumer_group="g", auto_offset_reset="earliest")  # doctest: +SKIP
>>> sdf = app.dataframe(app.topic("readings"))  # doctest: +SKIP
>>> sdf = sdf[sdf["temp"] > 30]  # doctest: +SKIP
>>> rows = app.run(count=10, timeout=30)  # doctest: +SKIP
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import signal
import threading
import time
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Collection, Iterable, Iterator, Literal, Mapping, Optional, Union

from pydantic import PositiveInt, SecretStr
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

from .dataframe.dataframe import StreamingDataFrame
from .dataframe.exceptions import StreamingDataFrameDuplicate
from .engine.masters import SHARED_STATE_ENV, default_master
from .error_callbacks import (
    ConsumerErrorCallback,
    ProcessingErrorCallback,
    ProducerErrorCallback,
    default_on_consumer_error,
    default_on_processing_error,
    default_on_producer_error,
)
from .exceptions import StreamsparkException
from .kafka.configuration import ConnectionConfig
from .kafka.consumer import Consumer
from .kafka.producer import PRODUCER_DEFAULTS, Producer, broker_config
from .logging import LogLevel, configure_logging
from .models.serializers import DeserializerType, SerializerType
from .models.timestamps import TimestampExtractor
from .models.topics import Topic, TopicAdmin, TopicConfig, TopicManager

if TYPE_CHECKING:
    from .sources.base.manager import SourceManager
    from .sources.base.source import BaseSource

__all__ = ("Application", "ApplicationConfig", "ProcessingGuarantee")

logger = logging.getLogger(__name__)

ProcessingGuarantee = Literal["at-least-once", "exactly-once"]
AutoOffsetReset = Literal["earliest", "latest", "error"]
MessageProcessedCallback = Callable[[str, int, int], None]


class _EnvSettings(BaseSettings):
    """Settings read from the environment (``Quix__…`` names are honoured for migration)."""

    model_config = SettingsConfigDict(extra="ignore", populate_by_name=True)

    broker_address: Optional[str] = None
    consumer_group: Optional[str] = None
    state_dir: Optional[str] = None
    state_dir_shared: Optional[bool] = None
    spark_master: Optional[str] = None

    @classmethod
    def read(cls) -> "_EnvSettings":
        env = os.environ

        def pick(*names: str) -> Optional[str]:
            for name in names:
                if env.get(name):
                    return env[name]
            return None

        return cls(
            broker_address=pick("Streamspark__Broker__Address", "Quix__Broker__Address"),
            consumer_group=pick("Streamspark__Consumer_Group", "Quix__Consumer_Group"),
            state_dir=pick("Streamspark__State__Dir", "Quix__State__Dir"),
            state_dir_shared=pick(SHARED_STATE_ENV),  # type: ignore[arg-type]
            spark_master=pick("Streamspark__Spark__Master", "SPARK_MASTER"),
        )


class ApplicationConfig(BaseSettings):
    """The immutable configuration of an application (environment variables are ignored).

    Pass it to sources and lookups as ``app_config``; ``copy(**changes)`` returns a modified copy.
    """

    model_config = SettingsConfigDict(frozen=True, arbitrary_types_allowed=True, revalidate_instances="never")

    broker_address: ConnectionConfig
    consumer_group: str
    consumer_group_prefix: str = ""
    auto_offset_reset: AutoOffsetReset = "latest"
    commit_interval: float = 5.0
    commit_every: int = 0
    consumer_extra_config: dict[str, Any] = {}
    producer_extra_config: dict[str, Any] = {}
    consumer_poll_timeout: float = 1.0
    producer_poll_timeout: float = 0.0
    auto_create_topics: bool = True
    request_timeout: float = 30
    topic_create_timeout: float = 60
    processing_guarantee: ProcessingGuarantee = "at-least-once"
    max_partition_buffer_size: int = 10000
    state_dir: Path = Path("state")
    rocksdb_options: Any = None
    use_changelog_topics: bool = True
    state_dir_shared: bool = False
    spark_master: str = "local[*]"
    spark_conf: dict[str, Any] = {}
    max_records_per_partition: Optional[PositiveInt] = None
    state_buckets: Optional[int] = None

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        return (init_settings,)

    def copy(self, **kwargs: Any) -> "ApplicationConfig":  # type: ignore[override]
        """Return a validated copy with ``kwargs`` changed.

        :raises pydantic.ValidationError: (a ``ValueError``) a changed value is invalid.
        """
        return type(self)(**{**dict(self), **kwargs})

    def as_dict(self, plaintext_secrets: bool = False, include: Optional[Collection[str]] = None) -> dict[str, Any]:
        """The settings that are set (not None) under dotted names (``consumer_group`` ->
        ``consumer.group``), as the reference's settings give them; secrets stay masked unless
        ``plaintext_secrets``.

        :param include: only these fields.

        >>> config = Application(broker_address="localhost:9092", consumer_group="g").config
        >>> config.as_dict(include={"consumer_group", "commit_interval"})
        {'consumer.group': 'g', 'commit.interval': 5.0}
        """
        dump = self.model_dump(exclude_none=True, include=set(include) if include is not None else None)
        values: dict[str, Any] = {}
        for name, value in dump.items():
            if plaintext_secrets and isinstance(value, SecretStr):
                value = value.get_secret_value()
            values[name.replace("_", ".")] = value
        return values

    @property
    def flush_timeout(self) -> float:
        return self.request_timeout

    @property
    def exactly_once(self) -> bool:
        """True when ``processing_guarantee`` is ``"exactly-once"``."""
        return self.processing_guarantee == "exactly-once"


#: parameters of the reference's ``Application`` that have no effect on Spark, and what replaces them
IGNORED_PARAMETERS: dict[str, str] = {
    "rocksdb_options": "state lives in Spark's state store (RocksDB provider); tune it through spark_conf "
    "(spark.sql.streaming.stateStore.rocksdb.*)",
    "use_changelog_topics": "state is recovered from the Spark checkpoint under state_dir; there are no changelog topics",
    "quix_portal_api": "Quix Cloud is not supported; pass broker_address",
    "consumer_poll_timeout": "the Kafka source reads whole ranges per micro-batch; pace it with commit_interval "
    "and max_records_per_partition",
    "producer_poll_timeout": "producers are polled by the engine and flushed at the end of every micro-batch",
    "max_partition_buffer_size": "a micro-batch takes at most max_records_per_partition records of a partition",
    # newer Quix Streams parameters, accepted so that programs written for them run
    "state_recovery_offset_reset": "state is recovered from the Spark checkpoint under state_dir, not from changelog topics",
    "broker_availability_timeout": "an unreachable broker stops the run after request_timeout (docs/errors.md)",
    "auto_recover_from_source_offset_out_of_range": "a committed offset outside what the broker keeps is "
    "moved to the partition's first (or last) offset",
}
_warned_ignored: set[str] = set()


def _warn_ignored(**given: tuple[Any, Any]) -> None:
    """Log once per process, for each parameter set to something other than its default, that it
    has no effect and what replaces it."""
    for name, (value, default) in given.items():
        if value == default or name in _warned_ignored:
            continue
        _warned_ignored.add(name)
        logger.warning("Application(%s=...) has no effect in streamspark: %s", name, IGNORED_PARAMETERS[name])


class Application:
    """The entry point: topics, dataframes, and ``run()``.

    :param broker_address: ``"host:port"`` or a :class:`ConnectionConfig`
        (env ``Quix__Broker__Address``).
    :param consumer_group: the Kafka consumer group (env ``Quix__Consumer_Group``;
        default ``"quixstreams-default"``).
    :param auto_offset_reset: where to start when the group has no committed offset:
        ``"earliest"``, ``"latest"`` (default) or ``"error"``.
    :param commit_interval: how often offsets are committed, in seconds. A micro-batch is the
        unit of commit: a pipeline whose outputs are all topics (at least once) starts a
        micro-batch as soon as records arrive, so it commits at least this often; with a sink
        or exactly-once, a micro-batch starts every ``commit_interval`` (at once while there is
        a backlog); with ``close_idle_after`` windows, every ``commit_interval``
        (docs/guarantees.md).
    :param commit_every: caps the records of one micro-batch per partition (0: no cap beyond
        ``max_records_per_partition`` or its default).
    :param state_dir: where the Spark checkpoint (offsets, state) lives (env ``Quix__State__Dir``).
    :param state_dir_shared: declare that ``state_dir`` is storage the driver and every executor
        mount at the same path (env ``Streamspark__State__Shared=true``); required on a cluster
        master, where ``run()`` refuses to start otherwise (docs/cluster.md).
    :param loglevel: level of the ``streamspark`` logger; None leaves logging alone.
    :param processing_guarantee: ``"at-least-once"`` (default) or ``"exactly-once"``: Kafka
        outputs are written in transactions that commit with a per-unit marker, so after any
        crash a ``read_committed`` consumer sees each result once (see the README).
    :param on_consumer_error, on_processing_error, on_producer_error: return True to skip
        the failing record; otherwise the app stops with an error naming topic, partition
        and offset, and the failing micro-batch is not committed.
    :param on_message_processed: ``f(topic, partition, offset)`` after each input message
        (runs in the Spark workers).
    :param spark_master: Spark master URL (env ``Streamspark__Spark__Master``); by default the
        master given to ``spark-submit`` when the program runs under it, else ``local[*]``.
    :param spark_conf: extra Spark settings; they win over spark-submit's ``--conf``, which wins
        over streamspark's defaults (``{"spark.ui.enabled": "true"}`` turns the Spark UI on).
    :param max_records_per_partition: the most records one micro-batch takes from a partition.
        Default (None): 250,000 for a stateless pipeline whose outputs are all Kafka topics (at
        least once, on the ``fused-source`` path, in a run without ``timeout`` or ``count``):
        its tasks stream the records through, so a larger micro-batch costs no memory, and a
        backlog is read in fewer of them. Any other pipeline holds a micro-batch's records, so
        by default a micro-batch takes at most 500,000 records from all partitions together
        (shared out over them); set, this cap is the only bound. At most ``commit_every`` when
        that is set (docs/guarantees.md).
    :param state_buckets: stateful pipelines keep the state of all message keys in this many
        buckets (one Spark state entry each, processed as a unit per micro-batch); fixed for
        the life of a checkpoint. Default (None): the count the checkpoint was begun with; for
        a new checkpoint 16 per shuffle partition on a local master (32 on 2 cores), else 64
        (docs/state.md).
    :param state_recovery_offset_reset: a parameter of newer Quix Streams versions, accepted so
        that programs written for them run; no effect (a warning says what does the same here).
    :param broker_availability_timeout: the same (it must be >= 0).
    :param auto_recover_from_source_offset_out_of_range: the same.
    """

    def __init__(
        self,
        broker_address: Optional[Union[str, ConnectionConfig]] = None,
        *,
        quix_sdk_token: Optional[str] = None,
        quix_portal_api: Optional[str] = None,
        consumer_group: Optional[str] = None,
        auto_offset_reset: AutoOffsetReset = "latest",
        commit_interval: float = 5.0,
        commit_every: int = 0,
        consumer_extra_config: Optional[dict[str, Any]] = None,
        producer_extra_config: Optional[dict[str, Any]] = None,
        state_dir: Union[None, str, Path] = None,
        state_dir_shared: Optional[bool] = None,
        rocksdb_options: Any = None,
        on_consumer_error: Optional[ConsumerErrorCallback] = None,
        on_processing_error: Optional[ProcessingErrorCallback] = None,
        on_producer_error: Optional[ProducerErrorCallback] = None,
        on_message_processed: Optional[MessageProcessedCallback] = None,
        consumer_poll_timeout: float = 1.0,
        producer_poll_timeout: float = 0.0,
        loglevel: Optional[Union[int, LogLevel]] = "INFO",
        auto_create_topics: bool = True,
        use_changelog_topics: bool = True,
        quix_config_builder: Any = None,
        topic_manager: Optional[TopicManager] = None,
        request_timeout: float = 30,
        topic_create_timeout: float = 60,
        processing_guarantee: ProcessingGuarantee = "at-least-once",
        max_partition_buffer_size: int = 10000,
        spark_master: Optional[str] = None,
        spark_conf: Optional[dict[str, Any]] = None,
        max_records_per_partition: Optional[int] = None,
        state_buckets: Optional[int] = None,
        state_recovery_offset_reset: Optional[str] = None,
        broker_availability_timeout: float = 120.0,
        auto_recover_from_source_offset_out_of_range: bool = True,
    ) -> None:
        configure_logging(loglevel)
        _warn_ignored(
            rocksdb_options=(rocksdb_options, None),
            use_changelog_topics=(use_changelog_topics, True),
            quix_portal_api=(quix_portal_api, None),
            consumer_poll_timeout=(consumer_poll_timeout, 1.0),
            producer_poll_timeout=(producer_poll_timeout, 0.0),
            max_partition_buffer_size=(max_partition_buffer_size, 10000),
            state_recovery_offset_reset=(state_recovery_offset_reset, None),
            broker_availability_timeout=(broker_availability_timeout, 120.0),
            auto_recover_from_source_offset_out_of_range=(auto_recover_from_source_offset_out_of_range, True),
        )
        if broker_availability_timeout < 0:
            raise ValueError(f"broker_availability_timeout must be >= 0, got {broker_availability_timeout}")
        if state_buckets is not None and state_buckets < 1:
            raise ValueError("state_buckets must be >= 1")
        env = _EnvSettings.read()
        broker_address = broker_address or env.broker_address
        cloud = quix_sdk_token or quix_config_builder is not None or os.environ.get("Quix__Sdk__Token")
        if broker_address is None:
            if cloud:
                raise StreamsparkException("Quix Cloud is not supported by streamspark; pass broker_address instead")
            raise ValueError('broker_address is required (or set the "Quix__Broker__Address" environment variable)')
        if cloud:  # as in the reference, a broker address wins over the Quix Cloud settings
            logger.warning("broker_address is set: the Quix Cloud settings (quix_sdk_token, Quix__Sdk__Token) are ignored")
        if isinstance(broker_address, str):
            broker_address = ConnectionConfig(bootstrap_servers=broker_address)
        elif isinstance(broker_address, Mapping):  # ConnectionConfig's fields, as pydantic takes them
            broker_address = ConnectionConfig(**broker_address)
        elif not isinstance(broker_address, ConnectionConfig):
            raise ValueError(
                f"broker_address must be a str (host:port) or a ConnectionConfig, not {type(broker_address).__name__}"
            )
        if broker_address.oauth_cb is not None:
            raise ValueError(
                "ConnectionConfig(oauth_cb=...) is not supported: Spark's tasks get the Kafka settings as "
                "text, not the driver's Python function. Use sasl_oauthbearer_method='oidc' with "
                "sasl_oauthbearer_client_id, sasl_oauthbearer_client_secret and "
                "sasl_oauthbearer_token_endpoint_url, which librdkafka runs itself"
            )
        consumer_group = consumer_group or env.consumer_group or "quixstreams-default"
        state_path = Path(state_dir if state_dir is not None else (env.state_dir or "state"))

        # the config validates the arguments (pydantic's ValidationError, a ValueError, names the bad one)
        config = ApplicationConfig(
            broker_address=broker_address,
            consumer_group=consumer_group,
            auto_offset_reset=auto_offset_reset,
            commit_interval=commit_interval,
            commit_every=commit_every,
            consumer_extra_config=dict(consumer_extra_config or {}),
            producer_extra_config={**PRODUCER_DEFAULTS, **(producer_extra_config or {})},
            consumer_poll_timeout=consumer_poll_timeout,
            producer_poll_timeout=producer_poll_timeout,
            auto_create_topics=auto_create_topics,
            request_timeout=request_timeout,
            topic_create_timeout=topic_create_timeout,
            processing_guarantee=processing_guarantee,
            max_partition_buffer_size=max_partition_buffer_size,
            state_dir=state_path,
            rocksdb_options=rocksdb_options,
            use_changelog_topics=use_changelog_topics,
            state_dir_shared=bool(state_dir_shared if state_dir_shared is not None else env.state_dir_shared),
            spark_master=spark_master or env.spark_master or default_master(),
            spark_conf=dict(spark_conf or {}),
            max_records_per_partition=max_records_per_partition,
            state_buckets=state_buckets,
        )
        if config.commit_interval < 0:
            raise ValueError("commit_interval must be >= 0")
        if config.commit_every > 0 and config.max_records_per_partition is not None:
            # without a cap of the application's, the engine's default is lowered to commit_every
            config = config.copy(max_records_per_partition=min(config.max_records_per_partition, config.commit_every))
        self._config = config
        self._loglevel = loglevel if isinstance(loglevel, str) or loglevel is None else logging.getLevelName(loglevel)
        self._on_consumer_error = on_consumer_error or default_on_consumer_error
        self._on_processing_error = on_processing_error or default_on_processing_error
        self._on_producer_error = on_producer_error or default_on_producer_error
        self._on_message_processed = on_message_processed
        admin_config = {"socket.timeout.ms": int(config.request_timeout * 1000)}
        self._topic_admin = TopicAdmin(broker_address, extra_config=admin_config)
        self._topic_manager = topic_manager or TopicManager(
            self._topic_admin,
            consumer_group=consumer_group,
            timeout=config.request_timeout,
            create_timeout=config.topic_create_timeout,
            auto_create_topics=config.auto_create_topics,
        )
        self._dataframes: dict[str, StreamingDataFrame] = {}
        self._source_manager: Optional["SourceManager"] = None
        self._output_topics: dict[str, Topic] = {}
        self._runner: Any = None
        self._stop_requested = threading.Event()

    # --- configuration ---------------------------------------------------------------
    @classmethod
    def Quix(cls, *args: Any, **kwargs: Any) -> "Application":
        """Deprecated in the reference; not supported here."""
        raise AttributeError("Application.Quix() is deprecated; use Application(broker_address=...)")

    @property
    def config(self) -> ApplicationConfig:
        return self._config

    @property
    def is_quix_app(self) -> bool:
        """Always False: streamspark connects to the broker given by ``broker_address``."""
        return False

    @property
    def topic_manager(self) -> TopicManager:
        return self._topic_manager

    @property
    def checkpoint_dir(self) -> Path:
        """Where the Spark checkpoint of this consumer group lives."""
        return self._config.state_dir / self._config.consumer_group / "checkpoint"

    def _kafka_config(self, extra: dict[str, Any]) -> dict[str, Any]:
        return {
            **broker_config(self._config.broker_address),
            "group.id": self._config.consumer_group,
            **extra,
        }

    # --- topics and dataframes -----------------------------------------------------------
    def topic(
        self,
        name: str,
        value_deserializer: DeserializerType = "json",
        key_deserializer: DeserializerType = "bytes",
        value_serializer: SerializerType = "json",
        key_serializer: SerializerType = "bytes",
        config: Optional[TopicConfig] = None,
        timestamp_extractor: Optional[TimestampExtractor] = None,
    ) -> Topic:
        """Define a topic. As in Quix Streams, it is looked up on the broker at once and
        created when missing (``auto_create_topics``, with ``config``, or the default of one
        partition), and its ``broker_config`` is read; a program can produce to it right away.
        When no broker accepts a connection yet, that happens on ``run()``.

        :raises TopicNotFoundError: the topic does not exist and ``auto_create_topics`` is off.
        """
        return self._topic_manager.topic(
            name,
            value_deserializer=value_deserializer,
            key_deserializer=key_deserializer,
            value_serializer=value_serializer,
            key_serializer=key_serializer,
            create_config=config,
            timestamp_extractor=timestamp_extractor,
        )

    def dataframe(self, topic: Optional[Topic] = None, source: Optional["BaseSource"] = None) -> StreamingDataFrame:
        """Create the root dataframe of ``topic`` (one per topic).

        With ``source``, the source produces into ``topic`` (or, without ``topic``, into its
        default topic ``source__<name>``) and the dataframe reads that topic: the source runs in
        its own process beside the streaming query (:meth:`add_source`).

        >>> app = Application(broker_address="localhost:9092", consumer_group="g")
        >>> sdf = app.dataframe(app.topic("readings"))
        """
        if source is not None:
            topic = self.add_source(source, topic)
        if topic is None:
            raise ValueError("dataframe() needs a topic or a source")
        if topic.name in self._dataframes:
            raise StreamingDataFrameDuplicate(
                f"There is already a StreamingDataFrame using topic {topic.name} (branch that one instead of creating another)"
            )
        if topic.name not in self._topic_manager.topics:
            self._topic_manager.register(topic)
        sdf = StreamingDataFrame(topic, registry=self)
        self._dataframes[topic.name] = sdf
        return sdf

    def add_source(self, source: "BaseSource", topic: Optional[Topic] = None) -> Topic:
        """Run ``source`` beside the pipeline: it produces into ``topic`` (default: the topic of
        ``source.default_topic()``, named ``source__<name>``), created when missing (as
        :meth:`topic` does).

        Each source runs in its own process, started by :meth:`run` and stopped with it. A
        source that fails stops the run with :class:`~streamspark.sources.SourceException`
        (naming the source, with its traceback). Returns the topic the source produces to.
        """
        from .sources.base.manager import SourceManager, default_source_topic

        if self._source_manager is None:
            self._source_manager = SourceManager()
        if topic is None:
            topic = default_source_topic(source)
        if topic.name not in self._topic_manager.topics:
            self._topic_manager.register(topic)
        self._source_manager.register(
            source,
            topic,
            {**broker_config(self._config.broker_address), **self._config.producer_extra_config},
            consumer_config=self._kafka_config(self._config.consumer_extra_config),
            consumer_group=self._config.consumer_group,
            processing_guarantee=self._config.processing_guarantee,
            request_timeout=self._config.request_timeout,
            loglevel=self._loglevel,  # type: ignore[arg-type]  # a level name, as configure_logging takes
        )
        return topic

    def register_output_topic(self, topic: Topic) -> None:
        """Called by ``to_topic``: register the output topic (created when missing, as
        :meth:`topic` does)."""
        if topic.name not in self._topic_manager.topics:
            self._topic_manager.register(topic)
        self._output_topics[topic.name] = topic

    # --- clients -------------------------------------------------------------------------
    def get_producer(self) -> Producer:
        """A producer configured like the application's (use it as a context manager)."""
        return Producer(self._config.broker_address, extra_config=self._config.producer_extra_config)

    def get_consumer(self, auto_commit_enable: bool = True) -> Consumer:
        """A consumer configured like the application's; offsets are stored only by ``store_offsets``."""
        return Consumer(
            self._config.broker_address,
            consumer_group=self._config.consumer_group,
            auto_offset_reset=self._config.auto_offset_reset,
            auto_commit_enable=auto_commit_enable,
            extra_config=self._config.consumer_extra_config,
        )

    def clear_state(self) -> None:
        """Delete this consumer group's Spark checkpoint (offsets and state) under ``state_dir``."""
        path = self._config.state_dir / self._config.consumer_group
        if path.exists():
            shutil.rmtree(path)

    # --- running -------------------------------------------------------------------------
    def status(self) -> dict[str, Any]:
        """Where the current ``run()`` is, for monitoring from another thread: micro-batches,
        records in and out, and the consumer lag per topic-partition after the last committed
        micro-batch (the same figures the progress log shows).

        ``{"running": True, "batches": 12, "inputs": 5000, "outputs": 4990, "last_batch_id": 11,
        "lag": {"readings": {0: 0, 1: 12}}, "total_lag": 12}``; outside a run,
        ``{"running": False}``.

        >>> Application(broker_address="localhost:9092", consumer_group="g").status()
        {'running': False}
        """
        runner = self._runner
        if runner is None:
            return {"running": False}
        status: dict[str, Any] = runner.status()
        return status

    def stop(self, fail: bool = False) -> None:
        """Stop a running application. The micro-batch in flight finishes and commits unless ``fail``."""
        self._stop_requested.set()
        runner = self._runner
        if runner is not None:
            if fail:
                runner.fail_fast = True
            runner.request_stop()

    def _eos_config(self, checkpoint_id: str, buckets: int, topics: Iterable[Topic]) -> Any:
        """Create (or grow) the exactly-once marker topic and describe it for the workers
        (``checkpoint_id``: see ``engine._eos.checkpoint_identity``; ``buckets``: the run's
        state buckets; ``topics``: the topics the query reads)."""
        from .engine._eos import EosConfig, marker_slots, marker_topic_name
        from .models.topics.exceptions import TopicConfigurationError

        def partitions(topic: Topic) -> int:
            try:
                return topic.broker_config.num_partitions
            except TopicConfigurationError:  # not read from the broker
                return 1

        input_partitions = sum(partitions(topic) for topic in topics if topic is not None)
        name = marker_topic_name(self._config.consumer_group)
        slots = marker_slots(buckets, input_partitions)
        existing = self._topic_admin.inspect_topics([name], timeout=self._config.request_timeout)[name]
        if existing is None:
            marker = Topic(name, create_config=TopicConfig(num_partitions=slots, replication_factor=1))
            self._topic_admin.create_topics(
                [marker], timeout=self._config.request_timeout, finalize_timeout=self._config.topic_create_timeout
            )
        elif existing.num_partitions < slots:
            from confluent_kafka.admin import NewPartitions

            for fut in self._topic_admin.admin_client.create_partitions([NewPartitions(name, slots)]).values():
                fut.result(self._config.request_timeout)
        else:
            slots = existing.num_partitions
        return EosConfig(
            self._config.consumer_group,
            name,
            buckets,
            slots,
            checkpoint_id=checkpoint_id,
        )

    def _repartition(self, plan: Any) -> None:
        """Give ``plan``'s group_by nodes repartition topics when they need them
        (``engine/repartition.py``): registered, created (copying the settings of the topics
        they re-key, as the reference does) and read like the application's own topics."""
        from .engine.repartition import needs_repartition_topics, through_repartition_topics
        from .engine.runner import run_strategies

        if not needs_repartition_topics(plan, run_strategies()):
            return

        def topic_for(group: Any, sources: list[Topic]) -> Topic:
            # created with its broker settings read: a group_by fed by this one's topic
            # derives its own topic's settings from it
            return self._topic_manager.repartition_topic(
                operation=group.name,
                stream_id=group.origin_stream_id,
                config=self._topic_manager.derive_topic_config(sources),
                **group.serdes,
            )

        names = through_repartition_topics(plan, topic_for)
        logger.info("Re-keying through the repartition topic(s) %s", ", ".join(names))

    def _plan(self, collect: bool, metadata: bool) -> Any:
        """The run's plan, without its exactly-once settings (``eos``: set by :meth:`run`)."""
        from .engine._plan import PipelinePlan

        topics = {name: sdf.topic for name, sdf in self._dataframes.items()}
        return PipelinePlan(
            run_id=uuid.uuid4().hex,
            topics=topics,  # type: ignore[arg-type]
            roots={name: sdf.stream.root() for name, sdf in self._dataframes.items()},
            producer_config={**broker_config(self._config.broker_address), **self._config.producer_extra_config},
            on_consumer_error=self._on_consumer_error,
            on_processing_error=self._on_processing_error,
            on_producer_error=self._on_producer_error,
            on_message_processed=self._on_message_processed,
            collect=collect,
            metadata=metadata,
            loglevel=self._loglevel,
        )

    def run(
        self,
        dataframe: Optional[StreamingDataFrame] = None,
        timeout: float = 0.0,
        count: int = 0,
        collect: bool = True,
        metadata: bool = False,
    ) -> list[Any]:
        """Run the pipeline on Spark.

        Without ``timeout``/``count`` it runs until SIGTERM, Ctrl+C or :meth:`stop`.

        :param timeout: stop after this many seconds without new messages (the clock starts
            once the source has been checked for data the first time).
        :param count: stop once this many outputs (records reaching the end of any branch)
            were produced. Each micro-batch reads just the records the missing outputs need
            (one output per record until the run has seen otherwise), so a pipeline with an
            output per record processes exactly ``count`` records; records that give several
            outputs (``expand``, several output branches) can produce up to that many times
            ``count``, filters and windows a micro-batch's worth more (they are committed).
            ``count`` are returned.
        :param collect: return the outputs (only with ``timeout`` or ``count``), as dicts: a
            value that is not a dict comes as ``{"_value": value}``.
        :param metadata: add ``_key, _timestamp, _headers, _topic, _partition, _offset`` to each output.
        """
        if dataframe is not None:
            logger.warning("run(dataframe=...) is deprecated; dataframes are tracked automatically")
        if not self._dataframes:
            if count:
                raise ValueError("run(count=...) needs a StreamingDataFrame; an application of sources only stops on timeout")
            if self._source_manager is not None:
                return self._run_sources_only(timeout)
            raise StreamsparkException("Nothing to run: create a dataframe with app.dataframe(topic) first")
        from .engine.bucketing import checkpoint_state_layout, default_state_buckets
        from .engine.masters import check_state_dir, is_local_master, running_session
        from .engine.pacing import min_batch_interval, trigger_interval
        from .engine.runner import QueryRunner, RunLimits, run_strategies
        from .engine.strategies import PACKED_BUCKETS, STATE_READS_SOURCE
        from .engine.session import planned_shuffle_partitions, refuse_spark_connect

        refuse_spark_connect(self._config.spark_master)
        # a session already running in the process decides where the run happens
        session = running_session()
        master = session.sparkContext.master if session is not None else self._config.spark_master
        check_state_dir(master, self.checkpoint_dir, self._config.state_dir_shared)
        # a new checkpoint gets its identity on its first run, whatever the guarantee, so that a
        # switch to exactly-once later never reads the markers of an earlier checkpoint
        from .engine._eos import checkpoint_identity

        checkpoint_id = checkpoint_identity(self.checkpoint_dir)
        limited = bool(timeout or count)
        collect = collect and limited
        logger.info("Checking topics on %s", self._config.broker_address.bootstrap_servers)
        self._topic_manager.ensure_topics()
        plan = self._plan(collect=collect, metadata=metadata)
        self._repartition(plan)
        partitions = planned_shuffle_partitions(master, self._config.spark_conf, session)
        layout = checkpoint_state_layout(
            self.checkpoint_dir,
            self._config.state_buckets,
            default_state_buckets(partitions if is_local_master(master) else None),
            partitions,
            int_keys=bool(plan.group_nodes),  # the group_by paths key a bucket's rows by an int
            # a new checkpoint buckets by partition where its state buckets can read their records
            by_partition=all(run_strategies().enabled(s) for s in (PACKED_BUCKETS, STATE_READS_SOURCE))
            and plan.fits_partition_buckets(partitions),
        )
        buckets, plan.bucket_labels = layout.buckets, layout.labels
        plan.partition_buckets = layout.by_partition and not plan.group_nodes
        if self._config.processing_guarantee == "exactly-once":
            plan.eos = self._eos_config(checkpoint_id, buckets, plan.topics.values())
        plan.check_copartitioned()
        callbacks: Optional[Any] = None
        restore_callbacks: Callable[[], None] = lambda: None
        if is_local_master(master):
            # the pipeline runs in Spark's worker processes: the program's callbacks run here
            from .engine.callbacks import CallbackServer, route_to_driver

            callbacks = CallbackServer()
            restore_callbacks = route_to_driver(plan, callbacks)
        sinks = {node.id: node.sink for node in plan.sink_nodes()}
        trigger = trigger_interval(plan, self._config.commit_interval, limited)
        self._runner = runner = QueryRunner(
            plan=plan,
            kafka_config=self._kafka_config(self._config.consumer_extra_config),
            auto_offset_reset=self._config.auto_offset_reset,
            checkpoint_dir=str(self.checkpoint_dir.absolute()),
            spark_master=self._config.spark_master,  # a running session is used (with a warning when it differs)
            spark_conf=self._config.spark_conf,
            trigger_interval=trigger,
            max_records_per_partition=self._config.max_records_per_partition,
            commit_every=self._config.commit_every,
            request_timeout=self._config.request_timeout,
            sinks_by_node=sinks,
            state_buckets=buckets,
            min_batch_interval=min_batch_interval(plan, self._config.commit_interval, limited),
        )
        if self._stop_requested.is_set():
            runner.request_stop()
        watcher = _SourceWatcher(self._source_manager, runner) if self._source_manager is not None else None
        try:
            with self._signal_handlers(runner):
                if watcher is not None:
                    watcher.start()
                logger.info("Starting the streaming query (checkpoint: %s)", self.checkpoint_dir)
                runner.run(RunLimits(timeout=timeout, count=count))
        except BaseException:
            # a failed source stops the query at once: whatever that cut short, its error wins
            if watcher is not None and watcher.error is not None:
                raise watcher.error
            raise
        finally:
            restore_callbacks()
            if callbacks is not None:
                callbacks.close()
            if watcher is not None:
                watcher.stop()
        self._runner = None
        if watcher is not None:
            watcher.raise_for_error()
        self._stop_requested.clear()
        logger.info(
            "Stopped after %d batch(es): %d in, %d out, %.2fs in micro-batches with data",
            runner.batches,
            runner.inputs,
            runner.outputs,
            runner.batch_seconds,
        )
        if not collect:
            return []
        return runner.collected[:count] if count else runner.collected

    def _run_sources_only(self, timeout: float) -> list[Any]:
        """``run()`` of an application with sources and no dataframe: the sources produce
        until they all finish, ``timeout`` seconds pass (when given), SIGTERM/Ctrl+C or
        :meth:`stop`."""
        assert self._source_manager is not None
        logger.info("Checking topics on %s", self._config.broker_address.bootstrap_servers)
        self._topic_manager.ensure_topics()
        stop = threading.Event()

        class _Stopper:
            def request_stop(self) -> None:
                stop.set()

        manager = self._source_manager
        deadline = time.monotonic() + timeout if timeout else None
        with self._signal_handlers(_Stopper()):
            manager.start()
            try:
                while manager.is_alive() and not stop.is_set() and not self._stop_requested.is_set():
                    manager.raise_for_error()
                    if deadline is not None and time.monotonic() >= deadline:
                        break
                    stop.wait(0.2)
            finally:
                manager.stop()
        self._stop_requested.clear()
        manager.raise_for_error()
        return []

    @contextlib.contextmanager
    def _signal_handlers(self, runner: Any) -> Iterator[None]:
        if threading.current_thread() is not threading.main_thread():
            yield
            return

        def handler(signum: int, frame: Any) -> None:
            logger.info("Received %s: finishing the current micro-batch and stopping", signal.Signals(signum).name)
            runner.request_stop()

        previous = {sig: signal.signal(sig, handler) for sig in (signal.SIGINT, signal.SIGTERM)}
        try:
            yield
        finally:
            for sig, prev in previous.items():
                signal.signal(sig, prev)


class _SourceWatcher:
    """Starts an application's sources beside its streaming query and checks them every
    ``interval`` seconds: a failed source stops the query at once (the micro-batch in flight is
    not committed) and its :class:`~streamspark.sources.SourceException` is raised by ``run()``."""

    def __init__(self, manager: "SourceManager", runner: Any, interval: float = 0.5) -> None:
        self.manager, self.runner, self.interval = manager, runner, interval
        self.error: Optional[BaseException] = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="streamspark-sources", daemon=True)

    def start(self) -> None:
        self.manager.start()
        self._thread.start()

    def _watch(self) -> None:
        while not self._stop.wait(self.interval):
            try:
                self.manager.raise_for_error()
            except BaseException as exc:  # a SourceException: the run fails with it
                self.error = exc
                self.runner.fail_fast = True
                self.runner.request_stop()
                return

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()
        self.manager.stop()

    def raise_for_error(self) -> None:
        """Raise the failure of a source seen while the query ran, or since."""
        if self.error is not None:
            raise self.error
        self.manager.raise_for_error()
