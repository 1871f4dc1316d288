"""Reading a Google Cloud Pub/Sub subscription in batches, acknowledging after they are delivered.

:class:`PubSubConsumer` subscribes with the client's streaming pull; the messages it receives
wait in a queue until :meth:`PubSubConsumer.poll_and_process` hands them, one at a time in the
calling thread, to the processor. :meth:`PubSubConsumer.commit` acknowledges the processed
messages: call it after the produced messages are delivered (at-least-once).
"""

from __future__ import annotations

import json
import logging
import queue
import time
from typing import Any, Callable, Optional

from .._client import import_client

__all__ = ("PubSubConsumer", "PubSubSubscriptionNotFound", "PubSubMessage")

logger = logging.getLogger(__name__)

#: a received message: ``data`` (bytes), ``attributes``, ``ordering_key``, ``publish_time``, ``ack()``
PubSubMessage = Any

#: the longest a poll blocks at once (an interrupted batch returns within this)
_POLL_SLICE = 0.2


class PubSubSubscriptionNotFound(Exception):
    """Raised when an expected subscription does not exist."""


class PubSubConsumer:
    """Pull the messages of a Pub/Sub subscription and process them in batches.

    :param project_id: the Google Cloud project.
    :param topic_id: the topic's ID (not its path).
    :param subscription_id: the subscription's ID (not its path).
    :param credentials: a service account's JSON (default: the environment's credentials,
        ``GOOGLE_APPLICATION_CREDENTIALS``, or ``PUBSUB_EMULATOR_HOST`` for an emulator).
    :param max_batch_size: a batch ends after this many messages...
    :param batch_timeout_secs: ...or after this many seconds.
    :param commit_timeout_secs: the ack deadline of a subscription this consumer creates.
    :param default_poll_timeout_secs: how long :meth:`poll_and_process` waits by default.
    :param create_subscription: create the subscription when it does not exist.
    :param enable_message_ordering: message ordering of a subscription this consumer creates.
    :param async_function: called with each message.
    :param client: a ``SubscriberClient`` to use (default: one made from ``credentials``).
    """

    def __init__(
        self,
        project_id: str,
        topic_id: str,
        subscription_id: str,
        credentials: Optional[str] = None,
        max_batch_size: int = 100,
        batch_timeout_secs: float = 10.0,
        commit_timeout_secs: int = 30,
        default_poll_timeout_secs: float = 5.0,
        create_subscription: bool = False,
        enable_message_ordering: bool = False,
        async_function: Optional[Callable[[PubSubMessage], None]] = None,
        client: Any = None,
    ) -> None:
        self._project_id = project_id
        self._topic_id = topic_id
        self._subscription_id = subscription_id
        self._credentials = credentials
        self._max_batch_size = max_batch_size
        self._batch_timeout = batch_timeout_secs
        self._commit_timeout = commit_timeout_secs
        self._default_poll_timeout = default_poll_timeout_secs
        self._create_subscription = create_subscription
        self._enable_message_ordering = enable_message_ordering
        self._async_function = async_function
        self._consumer: Any = client
        self._received: queue.Queue[PubSubMessage] = queue.Queue()
        self._processed: list[PubSubMessage] = []
        self._async_listener: Any = None
        self._interrupted = False

    def _new_client(self) -> Any:
        pubsub_v1 = import_client("google.cloud.pubsub_v1", "PubSubSource", "pubsub")
        if not self._credentials:
            logger.info("No service account JSON given: Pub/Sub uses the environment's credentials")
            return pubsub_v1.SubscriberClient()
        service_account = import_client("google.oauth2.service_account", "PubSubSource", "pubsub")
        credentials = service_account.Credentials.from_service_account_info(
            json.loads(self._credentials, strict=False), scopes=["https://www.googleapis.com/auth/pubsub"]
        )
        return pubsub_v1.SubscriberClient(credentials=credentials)

    @property
    def topic_path(self) -> str:
        return self._consumer.topic_path(self._project_id, self._topic_id)

    @property
    def subscription_path(self) -> str:
        return self._consumer.subscription_path(self._project_id, self._subscription_id)

    def start(self) -> None:
        """Create the client, the subscription (``create_subscription``) and subscribe (once)."""
        if self._async_listener is not None:
            return
        if self._consumer is None:
            self._consumer = self._new_client()
        if self._create_subscription:
            logger.debug("Pub/Sub subscription: %s", self.handle_subscription())
        self.subscribe()

    def subscribe(self) -> None:
        """Start the streaming pull: received messages wait until polled.

        NOTE: this does not check that the subscription exists (polling raises
        :class:`PubSubSubscriptionNotFound` when it does not).
        """
        types = import_client("google.cloud.pubsub_v1.types", "PubSubSource", "pubsub")
        # messages stay leased until acknowledged by commit(): let two batches be outstanding
        flow_control = types.FlowControl(max_messages=max(2 * self._max_batch_size, 10))
        self._async_listener = self._consumer.subscribe(
            self.subscription_path, callback=self._received.put, flow_control=flow_control
        )

    def handle_subscription(self) -> Any:
        """The subscription, created first when it does not exist.

        Subscriptions work like Kafka consumer groups: each topic can have many subscriptions,
        and a subscription many subscribers sharing its messages.
        """
        exceptions = import_client("google.api_core.exceptions", "PubSubSource", "pubsub")
        try:
            return self._consumer.get_subscription(subscription=self.subscription_path)
        except exceptions.NotFound:
            logger.info("Creating the Pub/Sub subscription %s", self.subscription_path)
            return self._consumer.create_subscription(
                request={
                    "name": self.subscription_path,
                    "topic": self.topic_path,
                    "ack_deadline_seconds": self._commit_timeout,
                    "enable_message_ordering": self._enable_message_ordering,
                }
            )

    def _raise_if_failed(self) -> None:
        listener = self._async_listener
        if listener is None or not listener.done() or listener.cancelled():
            return
        exc = listener.exception()
        if exc is None:
            return
        exceptions = import_client("google.api_core.exceptions", "PubSubSource", "pubsub")
        if isinstance(exc, exceptions.NotFound):
            raise PubSubSubscriptionNotFound(
                f'Subscription "{self._subscription_id}" (to topic "{self._topic_id}") does not exist; '
                "create it or set create_subscription=True"
            ) from exc
        raise exc

    def poll_and_process(self, timeout: Optional[float] = None) -> None:
        """Process one received message, waiting up to ``timeout`` seconds for one.
        Committing is a separate step.

        :raises PubSubSubscriptionNotFound: the subscription does not exist.
        """
        self._raise_if_failed()
        try:
            message = self._received.get(timeout=self._default_poll_timeout if timeout is None else timeout)
        except queue.Empty:
            self._raise_if_failed()
            return
        if self._async_function is not None:
            self._async_function(message)
        self._processed.append(message)

    def poll_and_process_batch(self) -> None:
        """Poll and process until ``max_batch_size`` messages or ``batch_timeout_secs`` (or an
        :meth:`interrupt`)."""
        self._interrupted = False
        deadline = time.monotonic() + self._batch_timeout
        while not self._interrupted and len(self._processed) < self._max_batch_size:
            left = deadline - time.monotonic()
            if left <= 0:
                return
            self.poll_and_process(timeout=min(left, _POLL_SLICE))

    def interrupt(self) -> None:
        """End the current batch early (e.g. when the source stops)."""
        self._interrupted = True

    def commit(self) -> None:
        """Acknowledge the messages processed since the last commit."""
        processed, self._processed = self._processed, []
        for message in processed:
            message.ack()
        if processed:
            logger.debug("Acknowledged %d Pub/Sub message(s)", len(processed))

    def stop(self) -> None:
        """Stop pulling (unacknowledged messages are delivered again later) and close the client."""
        if self._async_listener is not None:
            self._async_listener.cancel()
            try:
                self._async_listener.result(timeout=10)
            except Exception as exc:  # cancelled, or it had failed: either way it ended
                logger.debug("Pub/Sub streaming pull ended: %r", exc)
            self._async_listener = None
        if self._consumer is not None:
            self._consumer.close()
            self._consumer = None

    def __enter__(self) -> "PubSubConsumer":
        self.start()
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.stop()
