"""``KinesisSource``: the records of an Amazon Kinesis data stream, produced to a topic.

>>> source = KinesisSource("events", aws_region="eu-west-1", auto_offset_reset="earliest")
>>> source.name, source.default_topic().name
('kinesis_events', 'kinesis_events')

Needs ``pip install "streamspark[kinesis]"`` (``boto3``).
"""

from __future__ import annotations

import time
from os import getenv
from typing import Optional

from ....models.topics import Topic
from ...base.source import (
    ClientConnectFailureCallback,
    ClientConnectSuccessCallback,
    StatefulSource,
    string_keyed_bytes_topic,
)
from .._client import import_client
from ..aws_errors import aws_error
from .consumer import AutoOffsetResetType, AWSCredentials, KinesisCheckpointer, KinesisConsumer, KinesisRecord

__all__ = ("KinesisSource",)

#: seconds to wait after a round over every shard returned nothing (Kinesis allows 5 reads/s/shard)
_IDLE_WAIT = 0.2


class KinesisSource(StatefulSource):
    """Read a Kinesis stream's shards round-robin and produce each record: value = the record's
    data (bytes), key = its partition key (str), timestamp = its arrival time.

    Guarantee: at-least-once. The last sequence number read per shard is kept in the source's
    state and committed with the produced messages every ``commit_interval`` seconds; after a
    restart each shard resumes after its committed sequence number (records read since the
    last commit are produced again).

    A missing stream, refused credentials or an unreachable endpoint stop the source with
    :class:`~streamspark.sources.SourceInputError` naming it and the stream.

    Example::

        app = Application(broker_address="localhost:9092", consumer_group="kinesis")
        sdf = app.dataframe(source=KinesisSource("events", auto_offset_reset="earliest"))
        sdf = sdf.apply(lambda data: data.decode())

    :param stream_name: the stream to read.
    :param aws_region: default: ``AWS_REGION`` when this module is imported.
    :param aws_access_key_id: default: ``AWS_ACCESS_KEY_ID`` when this module is imported.
    :param aws_secret_access_key: default: ``AWS_SECRET_ACCESS_KEY`` when this module is imported.
    :param aws_endpoint_url: a local Kinesis (emulator); default: ``AWS_ENDPOINT_URL_KINESIS``
        when this module is imported. Unset values fall back to the AWS client's own lookup.
    :param shutdown_timeout: seconds the application waits for the source to stop.
    :param auto_offset_reset: where shards without a committed sequence number start:
        ``"earliest"`` (their oldest record) or ``"latest"`` (new records only).
    :param max_records_per_shard: the most records read from one shard per round.
    :param commit_interval: seconds between commits.
    :param retry_backoff_secs: how long a throttled shard is left alone.
    :param on_client_connect_success: called after ``setup()`` succeeded.
    :param on_client_connect_failure: called with the exception when ``setup()`` failed.
    """

    _process_local_attributes = ("_consumer",)

    def __init__(
        self,
        stream_name: str,
        aws_region: Optional[str] = getenv("AWS_REGION"),
        aws_access_key_id: Optional[str] = getenv("AWS_ACCESS_KEY_ID"),
        aws_secret_access_key: Optional[str] = getenv("AWS_SECRET_ACCESS_KEY"),
        aws_endpoint_url: Optional[str] = getenv("AWS_ENDPOINT_URL_KINESIS"),
        shutdown_timeout: float = 10,
        auto_offset_reset: AutoOffsetResetType = "latest",
        max_records_per_shard: int = 1000,
        commit_interval: float = 5.0,
        retry_backoff_secs: float = 5.0,
        on_client_connect_success: Optional[ClientConnectSuccessCallback] = None,
        on_client_connect_failure: Optional[ClientConnectFailureCallback] = None,
    ) -> None:
        super().__init__(
            name=f"kinesis_{stream_name}",
            shutdown_timeout=shutdown_timeout,
            on_client_connect_success=on_client_connect_success,
            on_client_connect_failure=on_client_connect_failure,
        )
        if auto_offset_reset not in ("earliest", "latest"):
            raise ValueError(f'auto_offset_reset must be "earliest" or "latest", got {auto_offset_reset!r}')
        self._stream_name = stream_name
        self._credentials: AWSCredentials = {
            "endpoint_url": aws_endpoint_url,
            "region_name": aws_region,
            "aws_access_key_id": aws_access_key_id,
            "aws_secret_access_key": aws_secret_access_key,
        }
        self._auto_offset_reset: AutoOffsetResetType = auto_offset_reset
        self._max_records_per_shard = max_records_per_shard
        self._retry_backoff_secs = retry_backoff_secs
        self._checkpointer = KinesisCheckpointer(stateful_source=self, commit_interval=commit_interval)
        self._consumer: Optional[KinesisConsumer] = None

    def default_topic(self) -> Topic:
        """``kinesis_<stream>``: string keys, bytes values."""
        return string_keyed_bytes_topic(self.name)

    def _handle_kinesis_message(self, message: KinesisRecord) -> None:
        msg = self.serialize(
            key=message["PartitionKey"],
            value=message["Data"],
            timestamp_ms=int(message["ApproximateArrivalTimestamp"].timestamp() * 1000),
        )
        self.produce(key=msg.key, value=msg.value, timestamp=msg.timestamp)

    def setup(self) -> None:
        """Connect, list the stream's shards and position each (committed sequence number, else
        ``auto_offset_reset``)."""
        consumer = KinesisConsumer(
            stream_name=self._stream_name,
            credentials=self._credentials,
            message_processor=self._handle_kinesis_message,
            checkpointer=self._checkpointer,
            auto_offset_reset=self._auto_offset_reset,
            max_records_per_shard=self._max_records_per_shard,
            backoff_secs=self._retry_backoff_secs,
        )
        exceptions = import_client("botocore.exceptions", "KinesisSource", "kinesis")
        what = f'the Kinesis stream "{self._stream_name}"'
        try:
            self._consumer = consumer.__enter__()
        except (exceptions.ClientError, exceptions.BotoCoreError) as exc:
            consumer.__exit__(None, None, None)
            raise aws_error(exc, self.name, what) from exc

    def run(self) -> None:
        if self._consumer is None:
            raise RuntimeError(f'Source "{self.name}" runs only after setup()')
        with self._consumer as consumer:
            while self.running:
                if not consumer.process_shards():
                    time.sleep(_IDLE_WAIT)
                consumer.commit()
