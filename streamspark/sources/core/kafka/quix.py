"""``QuixEnvironmentSource``: not supported (it needs the Quix Cloud platform).

The reference's source replicates a topic of a Quix Cloud environment: it asks Quix's portal
API, with a workspace's SDK token, for that environment's broker settings and topic names.
streamspark does not support Quix Cloud (see ``Application``), so this class exists at the
reference's path with the reference's parameters and refuses to be built, naming what to use
instead: a :class:`~.kafka.KafkaReplicatorSource` given the environment's broker settings.

>>> from streamspark import Application
>>> app = Application(broker_address="localhost:9092", loglevel=None)
>>> QuixEnvironmentSource("env", app.config, "orders", quix_sdk_token="t", quix_workspace_id="w")
Traceback (most recent call last):
...
streamspark.exceptions.StreamsparkException: QuixEnvironmentSource needs the Quix Cloud platform ...
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional

from ....error_callbacks import ConsumerErrorCallback, default_on_consumer_error
from ....exceptions import StreamsparkException
from ....kafka.consumer import AutoOffsetReset
from ....models.serializers import DeserializerType
from ...base.source import ClientConnectFailureCallback, ClientConnectSuccessCallback
from .kafka import KafkaReplicatorSource

if TYPE_CHECKING:
    from ....app import ApplicationConfig

__all__ = ("QuixEnvironmentSource",)


class QuixEnvironmentSource(KafkaReplicatorSource):
    """Replicates a topic of a Quix Cloud environment: not supported, it needs Quix's portal
    API and a workspace's credentials. Building one raises :class:`StreamsparkException`; use
    :class:`KafkaReplicatorSource` with the environment's broker address (and its
    ``consumer_extra_config`` for the credentials) instead."""

    def __init__(
        self,
        name: str,
        app_config: "ApplicationConfig",
        topic: str,
        quix_sdk_token: str,
        quix_workspace_id: str,
        quix_portal_api: Optional[str] = None,
        auto_offset_reset: Optional[AutoOffsetReset] = None,
        consumer_extra_config: Optional[dict] = None,
        consumer_poll_timeout: Optional[float] = None,
        shutdown_timeout: float = 10,
        on_consumer_error: ConsumerErrorCallback = default_on_consumer_error,
        value_deserializer: DeserializerType = "json",
        key_deserializer: DeserializerType = "bytes",
        on_client_connect_success: Optional[ClientConnectSuccessCallback] = None,
        on_client_connect_failure: Optional[ClientConnectFailureCallback] = None,
    ) -> None:
        raise StreamsparkException(
            f'QuixEnvironmentSource needs the Quix Cloud platform (its portal API and the SDK token of workspace "{quix_workspace_id}"), '
            "which streamspark does not support: use KafkaReplicatorSource with the environment's broker address and "
            "credentials (consumer_extra_config) instead"
        )
