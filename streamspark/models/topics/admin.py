"""Create, inspect and list Kafka topics."""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING, Any, Iterable, Mapping, Optional, Union

from confluent_kafka import KafkaError, KafkaException
from confluent_kafka.admin import AdminClient, ConfigResource, NewTopic

from ...exceptions import BrokerUnreachableError
from .config import TopicConfig
from .exceptions import CreateTopicFailure, CreateTopicTimeout, TopicPermissionError
from .topic import Topic

if TYPE_CHECKING:  # the Kafka layer (and pydantic) is not imported by Spark task workers
    from ...kafka.configuration import ConnectionConfig

__all__ = ("TopicAdmin",)

logger = logging.getLogger(__name__)


def _authorization_failed(error: Any) -> bool:
    return isinstance(error, KafkaError) and error.code() == KafkaError.TOPIC_AUTHORIZATION_FAILED


class TopicAdmin:
    """Administration of topics over the Kafka admin API.

    :param broker_address: ``"host:port"`` or a ``ConnectionConfig``.
    :param logger: the logger librdkafka's log lines go to.
    :param extra_config: more librdkafka settings (the connection settings take precedence).

    >>> admin = TopicAdmin("127.0.0.1:9092")  # doctest: +SKIP
    >>> admin.create_topics([Topic("t", create_config=TopicConfig(2, 1))])  # doctest: +SKIP
    >>> admin.inspect_topics(["t"])["t"].num_partitions  # doctest: +SKIP
    2
    """

    def __init__(
        self,
        broker_address: Union[str, ConnectionConfig],
        logger: logging.Logger = logger,
        extra_config: Optional[Mapping[str, Any]] = None,
    ) -> None:
        from ...kafka.producer import broker_config

        self._config = {**(extra_config or {}), **broker_config(broker_address), "logger": logger}
        self._address = self._config.get("bootstrap.servers")
        self._inner: Optional[AdminClient] = None

    def __getstate__(self) -> dict[str, Any]:
        # the admin client does not pickle: a copy opens its own on first use
        state = self.__dict__.copy()
        state["_inner"] = None
        return state

    @property
    def admin_client(self) -> AdminClient:
        if self._inner is None:
            self._inner = AdminClient(self._config)
            self._inner.poll(0)  # serves an OAuth token callback, when one is configured
        return self._inner

    def reachable(self, timeout: float = 1.0) -> bool:
        """True when a bootstrap server accepts a TCP connection within ``timeout`` seconds
        (one tried after another): a quick check before asking the cluster something that
        would otherwise wait for its whole timeout on an address nothing listens on.

        >>> TopicAdmin("127.0.0.1:1").reachable()
        False
        """
        import socket

        for server in str(self._address or "").split(","):
            address = server.strip().rsplit("://", 1)[-1]
            host, _, port = address.rpartition(":")
            if not port.isdigit() or (address.startswith("[") and not host.endswith("]")):
                host, port = address, "9092"  # no port: librdkafka's default
            if not host:
                continue
            try:
                with socket.create_connection((host.strip("[]"), int(port)), timeout=timeout):
                    return True
            except OSError:
                continue
        return False

    def list_topics(self, timeout: float = -1) -> dict[str, Any]:
        """Return ``{name: TopicMetadata}`` of the cluster.

        :raises BrokerUnreachableError: the broker did not answer within ``timeout``.
        """
        try:
            return self.admin_client.list_topics(timeout=timeout).topics
        except KafkaException as exc:
            raise BrokerUnreachableError(
                f"Kafka broker at {self._address!r} did not answer within {timeout}s: {exc.args[0]}"
            ) from exc

    def inspect_topics(self, topic_names: list[str], timeout: float = 30) -> dict[str, Optional[TopicConfig]]:
        """Return ``{name: TopicConfig or None}`` for each name (None when the topic does not exist).

        :raises TopicPermissionError: the credentials may not describe a topic's configuration.
        """
        existing = self.list_topics(timeout=timeout)
        result: dict[str, Optional[TopicConfig]] = {}
        present = [name for name in topic_names if name in existing]
        configs: dict[str, dict[str, str]] = {}
        if present:
            try:
                futures = self.admin_client.describe_configs(
                    [ConfigResource(ConfigResource.Type.TOPIC, name) for name in present],
                    request_timeout=timeout,
                )
                denied = []
                for resource, fut in futures.items():
                    try:
                        entries = fut.result(timeout)
                    except KafkaException as exc:
                        if not _authorization_failed(exc.args[0]):
                            raise
                        denied.append(resource.name)
                        continue
                    configs[resource.name] = {k: v.value for k, v in entries.items() if v.value is not None}
            except Exception as exc:  # brokers without DescribeConfigs still give partitions
                logger.debug("describe_configs failed: %s", exc)
            else:
                if denied:
                    raise TopicPermissionError(
                        "Failed to access configs for topics "
                        + ", ".join(f'"{name}"' for name in denied)
                        + '; verify the "DescribeConfigs" operation is allowed for your credentials'
                    )
        for name in topic_names:
            meta = existing.get(name)
            if meta is None:
                result[name] = None
                continue
            partitions = meta.partitions
            replicas = len(next(iter(partitions.values())).replicas) if partitions else 1
            result[name] = TopicConfig(
                num_partitions=len(partitions),
                replication_factor=max(replicas, 1),
                extra_config=configs.get(name, {}),
            )
        return result

    def create_topics(self, topics: Iterable[Topic], timeout: float = 30, finalize_timeout: float = 60) -> None:
        """Create the topics that do not exist yet ("already exists" is not an error).

        :raises CreateTopicFailure: the broker refused a topic.
        :raises CreateTopicTimeout: creation did not finish within ``finalize_timeout``.
        """
        if timeout <= 0 or finalize_timeout <= 0:
            raise ValueError("timeout and finalize_timeout must be greater than 0")
        topics = list(topics)
        if not topics:
            return
        existing = self.list_topics(timeout=timeout)
        to_create = [t for t in topics if t.name not in existing]
        if not to_create:
            return
        new_topics = []
        for topic in to_create:
            cfg = topic.create_config or TopicConfig(num_partitions=1, replication_factor=1)
            new_topics.append(
                NewTopic(
                    topic.name,
                    num_partitions=cfg.num_partitions,
                    replication_factor=cfg.replication_factor,
                    config=dict(cfg.extra_config),
                )
            )
            logger.info('Creating topic "%s" (partitions=%s)', topic.name, cfg.num_partitions)
        futures = self.admin_client.create_topics(new_topics, request_timeout=timeout, operation_timeout=finalize_timeout)
        deadline = time.monotonic() + finalize_timeout
        for name, fut in futures.items():
            try:
                fut.result(timeout=max(deadline - time.monotonic(), 0.1))
            except KafkaException as exc:
                error = exc.args[0]
                if isinstance(error, KafkaError) and error.code() == KafkaError.TOPIC_ALREADY_EXISTS:
                    continue
                if _authorization_failed(error):
                    raise CreateTopicFailure(
                        f'Failed to create topic "{name}"; verify if "Create" and "Read" operations '
                        "are allowed for your credentials"
                    ) from exc
                raise CreateTopicFailure(f'Failed to create topic "{name}": {error}') from exc
            except TimeoutError as exc:  # concurrent.futures.TimeoutError is TimeoutError
                raise CreateTopicTimeout(f'Timed out creating topic "{name}"') from exc
        # wait until the metadata shows every partition
        while time.monotonic() < deadline:
            meta = self.list_topics(timeout=timeout)
            if all(t.name in meta and meta[t.name].partitions for t in to_create):
                return
            time.sleep(0.1)
        raise CreateTopicTimeout("Timed out waiting for topics to appear in metadata")

    def delete_topics(self, names: Iterable[str], timeout: float = 30) -> None:
        """Delete topics (missing ones are ignored)."""
        names = list(names)
        if not names:
            return
        for name, fut in self.admin_client.delete_topics(names, request_timeout=timeout).items():
            try:
                fut.result(timeout)
            except KafkaException as exc:
                error = exc.args[0]
                if isinstance(error, KafkaError) and error.code() == KafkaError.UNKNOWN_TOPIC_OR_PART:
                    continue
                raise
