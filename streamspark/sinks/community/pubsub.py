"""``PubSubSink``: publish records to a Google Cloud Pub/Sub topic.

Guarantee: at-least-once (``add`` publishes, ``flush`` waits for every publish; a replayed
micro-batch publishes again).

>>> sink = PubSubSink(project_id="my-project", topic_id="events")
"""

from __future__ import annotations

import json
from typing import Any, Callable, Optional, Union

from ...models.types import Headers
from ..base._delivery import import_optional
from ..base.sink import BaseSink, ClientConnectFailureCallback, ClientConnectSuccessCallback

__all__ = ("PubSubSink", "PubSubTopicNotFoundError")


class PubSubTopicNotFoundError(Exception):
    """The Pub/Sub topic does not exist."""


class PubSubSink(BaseSink):
    """Publish each record: data = ``value_serializer(value)`` (str is UTF-8 encoded), with the
    attributes ``key`` (``key_serializer(key)``, when there is a key), ``timestamp`` (Kafka
    timestamp, ms) and the message headers (values decoded as UTF-8).

    :param project_id: GCP project.
    :param topic_id: topic (it must exist).
    :param service_account_json: credentials JSON; default: Application Default Credentials.
    :param value_serializer: value → str/bytes (default ``json.dumps``).
    :param key_serializer: key → str (default ``bytes.decode``: bytes keys).
    :param flush_timeout: seconds ``flush`` waits for the publishes.
    :param kwargs: passed to ``pubsub_v1.PublisherClient``.

    Needs ``pip install "streamspark[pubsub]"``.
    """

    def __init__(
        self,
        project_id: str,
        topic_id: str,
        service_account_json: Optional[str] = None,
        value_serializer: Callable[[Any], Union[bytes, str]] = json.dumps,
        key_serializer: Callable[[Any], str] = bytes.decode,
        flush_timeout: int = 5,
        on_client_connect_success: Optional[ClientConnectSuccessCallback] = None,
        on_client_connect_failure: Optional[ClientConnectFailureCallback] = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(on_client_connect_success, on_client_connect_failure)
        self._project = project_id
        self._topic_id = topic_id
        self._sa_json = service_account_json
        self._value_serializer = value_serializer
        self._key_serializer = key_serializer
        self._flush_timeout = flush_timeout
        self._kwargs = kwargs
        self._client: Any = None
        self._topic = ""
        self._futures: list[Any] = []

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state.update(_client=None, _futures=[])
        return state

    def setup(self) -> None:
        pubsub_v1 = import_optional("google.cloud.pubsub_v1", "PubSubSink", "pubsub")
        kwargs = dict(self._kwargs)
        if self._sa_json:
            service_account = import_optional("google.oauth2.service_account", "PubSubSink", "pubsub")
            kwargs["credentials"] = service_account.Credentials.from_service_account_info(json.loads(self._sa_json))
        self._client = pubsub_v1.PublisherClient(**kwargs)
        self._topic = self._client.topic_path(self._project, self._topic_id)
        exceptions = import_optional("google.api_core.exceptions", "PubSubSink", "pubsub")
        try:
            self._client.get_topic(request={"topic": self._topic})
        except exceptions.NotFound:
            raise PubSubTopicNotFoundError(f"Pub/Sub topic {self._topic!r} does not exist") from None

    def add(self, value: Any, key: Any, timestamp: int, headers: Headers, topic: str, partition: int, offset: int) -> None:
        if self._client is None:
            self.setup()
        data = self._value_serializer(value)
        if isinstance(data, str):
            data = data.encode()
        attributes = {"timestamp": str(timestamp)}
        if key is not None:
            attributes["key"] = self._key_serializer(key)
        for name, header in headers or ():
            attributes[name] = header.decode(errors="replace") if isinstance(header, bytes) else str(header)
        self._futures.append(self._client.publish(self._topic, data, **attributes))

    def flush(self) -> None:
        """Wait (up to ``flush_timeout`` each) for every publish since the last flush."""
        futures, self._futures = self._futures, []
        for fut in futures:
            fut.result(timeout=self._flush_timeout)

    def on_paused(self) -> None:
        self._futures.clear()
