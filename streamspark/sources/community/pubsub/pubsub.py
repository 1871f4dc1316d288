"""``PubSubSource``: the messages of a Google Cloud Pub/Sub subscription, produced to a topic.

>>> source = PubSubSource(project_id="my-project", topic_id="events", subscription_id="events-to-kafka")
>>> source.name, source.default_topic().name
('events-to-kafka', 'pubsub_events-to-kafka_events')

Needs ``pip install "streamspark[pubsub]"`` (``google-cloud-pubsub``).
"""

from __future__ import annotations

from typing import Any, Optional

from ....models.topics import Topic
from ...base.exceptions import SourceInputError
from ...base.source import ClientConnectFailureCallback, ClientConnectSuccessCallback, Source, string_keyed_bytes_topic
from .consumer import PubSubConsumer, PubSubMessage, PubSubSubscriptionNotFound

__all__ = ("PubSubSource",)


class PubSubSource(Source):
    """Produce the messages of a Pub/Sub subscription: value = the message's data (bytes),
    key = its ordering key (None when it has none), timestamp = its publish time, headers =
    its attributes.

    Guarantee: at-least-once. Messages are processed in batches (``commit_every`` messages or
    ``commit_interval`` seconds); a batch is acknowledged once its messages are delivered, so
    messages of an unfinished batch are delivered again by Pub/Sub after a restart.

    A subscription that does not exist (without ``create_subscription``) stops the source with
    :class:`~streamspark.sources.SourceInputError` naming it and the subscription.

    Example::

        source = PubSubSource(service_account_json=os.environ["PUBSUB_SERVICE_ACCOUNT_JSON"],
                              project_id="my-project", topic_id="events",
                              subscription_id="events-to-kafka", create_subscription=True)
        app = Application(broker_address="localhost:9092", consumer_group="gcp")
        sdf = app.dataframe(source=source).apply(lambda data: data.decode())

    :param project_id: the Google Cloud project.
    :param topic_id: the topic's ID (not its full path).
    :param subscription_id: the subscription's ID (not its full path); also the source's name.
    :param service_account_json: a service account's credentials JSON (a string). Without it
        the environment decides: ``GOOGLE_APPLICATION_CREDENTIALS`` (a JSON file's path), or
        ``PUBSUB_EMULATOR_HOST`` for an emulator.
    :param commit_every: the most messages processed before a commit.
    :param commit_interval: the most seconds between commits.
    :param create_subscription: create the subscription at startup when it does not exist.
    :param enable_message_ordering: message ordering of a subscription this source creates
        (an existing subscription keeps its own).
    :param shutdown_timeout: seconds the application waits for the source to stop.
    :param on_client_connect_success: called after ``setup()`` succeeded.
    :param on_client_connect_failure: called with the exception when ``setup()`` failed.
    """

    _process_local_attributes = ("_consumer",)

    def __init__(
        self,
        project_id: str,
        topic_id: str,
        subscription_id: str,
        service_account_json: Optional[str] = None,
        commit_every: int = 100,
        commit_interval: float = 5.0,
        create_subscription: bool = False,
        enable_message_ordering: bool = False,
        shutdown_timeout: float = 10.0,
        on_client_connect_success: Optional[ClientConnectSuccessCallback] = None,
        on_client_connect_failure: Optional[ClientConnectFailureCallback] = None,
    ) -> None:
        super().__init__(
            name=subscription_id,
            shutdown_timeout=shutdown_timeout,
            on_client_connect_success=on_client_connect_success,
            on_client_connect_failure=on_client_connect_failure,
        )
        if commit_every < 1:
            raise ValueError(f"commit_every must be >= 1, got {commit_every}")
        self._credentials = service_account_json
        self._project_id = project_id
        self._topic_id = topic_id
        self._subscription_id = subscription_id
        self._commit_every = commit_every
        self._commit_interval = commit_interval
        self._create_subscription = create_subscription
        self._enable_message_ordering = enable_message_ordering
        self._consumer: Optional[PubSubConsumer] = None

    def default_topic(self) -> Topic:
        """``pubsub_<subscription>_<topic>``: string keys, bytes values."""
        return string_keyed_bytes_topic(f"pubsub_{self._subscription_id}_{self._topic_id}")

    def subscriber_client(self) -> Any:
        """The ``pubsub_v1.SubscriberClient`` to read with, or None (the default) to make one from
        ``service_account_json`` or the environment. Override it to configure the client."""
        return None

    def _handle_pubsub_message(self, message: PubSubMessage) -> None:
        msg = self.serialize(
            key=message.ordering_key or None, value=message.data, timestamp_ms=int(message.publish_time.timestamp() * 1000)
        )
        headers = list(dict(message.attributes).items()) or None
        self.produce(key=msg.key, value=msg.value, timestamp=msg.timestamp, headers=headers)

    def setup(self) -> None:
        """Connect, create the subscription (``create_subscription``) and start pulling."""
        self._consumer = PubSubConsumer(
            project_id=self._project_id,
            topic_id=self._topic_id,
            subscription_id=self._subscription_id,
            credentials=self._credentials,
            max_batch_size=self._commit_every,
            batch_timeout_secs=self._commit_interval,
            create_subscription=self._create_subscription,
            enable_message_ordering=self._enable_message_ordering,
            async_function=self._handle_pubsub_message,
            client=self.subscriber_client(),
        ).__enter__()

    def stop(self) -> None:
        super().stop()
        if self._consumer is not None:
            self._consumer.interrupt()

    def run(self) -> None:
        if self._consumer is None:
            raise RuntimeError(f'Source "{self.name}" runs only after setup()')
        with self._consumer as consumer:
            try:
                while self.running:
                    consumer.poll_and_process_batch()
                    self.flush()
                    consumer.commit()
            except PubSubSubscriptionNotFound as exc:
                raise SourceInputError(
                    self.name,
                    f'the Pub/Sub subscription "{consumer.subscription_path}"',
                    "it does not exist; create it or set create_subscription=True",
                ) from exc
