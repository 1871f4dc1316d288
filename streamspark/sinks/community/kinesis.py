"""``KinesisSink``: records into an Amazon Kinesis data stream with ``PutRecords``.

Guarantee: at-least-once (Kinesis has no idempotent writes; a replayed micro-batch sends its
records again).

>>> sink = KinesisSink(stream_name="events", region_name="eu-west-1")
"""

from __future__ import annotations

import json
import logging
import os
import time
from os import getenv
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Callable, Optional

from ...models.types import Headers
from ..base._delivery import import_optional
from ..base.sink import BaseSink, ClientConnectFailureCallback, ClientConnectSuccessCallback

__all__ = ("KinesisSink", "KinesisStreamNotFoundError")

logger = logging.getLogger(__name__)

_MAX_RECORDS = 500  # PutRecords limit
_ATTEMPTS = 5


class KinesisStreamNotFoundError(Exception):
    """The Kinesis stream does not exist."""


class KinesisSink(BaseSink):
    """Send records to Kinesis: every 500 buffered records go out at once (in the background);
    ``flush`` sends the rest and waits for all of them. Records a shard throttled are retried
    (5 attempts with backoff) before the flush fails.

    :param stream_name: the stream (it must exist).
    :param aws_access_key_id, aws_secret_access_key, region_name, aws_endpoint_url: default to
        ``AWS_ACCESS_KEY_ID``, ``AWS_SECRET_ACCESS_KEY``, ``AWS_REGION``/``AWS_DEFAULT_REGION``
        and ``AWS_ENDPOINT_URL_KINESIS`` as they are when this module is imported; those still
        unset then are read again when the sink starts.
    :param value_serializer: value → str (default ``json.dumps``).
    :param key_serializer: key → str, the partition key (default ``bytes.decode``: bytes keys).
    :param kwargs: passed to ``boto3.client``.

    Needs ``pip install "streamspark[kinesis]"``.
    """

    def __init__(
        self,
        stream_name: str,
        aws_access_key_id: Optional[str] = getenv("AWS_ACCESS_KEY_ID"),
        aws_secret_access_key: Optional[str] = getenv("AWS_SECRET_ACCESS_KEY"),
        region_name: Optional[str] = getenv("AWS_REGION", getenv("AWS_DEFAULT_REGION")),
        aws_endpoint_url: Optional[str] = getenv("AWS_ENDPOINT_URL_KINESIS"),
        value_serializer: Callable[[Any], str] = json.dumps,
        key_serializer: Callable[[Any], str] = bytes.decode,
        on_client_connect_success: Optional[ClientConnectSuccessCallback] = None,
        on_client_connect_failure: Optional[ClientConnectFailureCallback] = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(on_client_connect_success, on_client_connect_failure)
        self._stream = stream_name
        self._credentials = dict(
            aws_access_key_id=aws_access_key_id,
            aws_secret_access_key=aws_secret_access_key,
            region_name=region_name,
            endpoint_url=aws_endpoint_url,
        )
        self._kwargs = kwargs
        self._value_serializer = value_serializer
        self._key_serializer = key_serializer
        self._client: Any = None
        self._executor: Optional[ThreadPoolExecutor] = None
        self._buffer: list[dict[str, Any]] = []
        self._futures: list[Future[None]] = []

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state.update(_client=None, _executor=None, _buffer=[], _futures=[])
        return state

    def setup(self) -> None:
        boto3 = import_optional("boto3", "KinesisSink", "kinesis")
        env = os.environ
        params = {
            "aws_access_key_id": self._credentials["aws_access_key_id"] or env.get("AWS_ACCESS_KEY_ID"),
            "aws_secret_access_key": self._credentials["aws_secret_access_key"] or env.get("AWS_SECRET_ACCESS_KEY"),
            "region_name": self._credentials["region_name"] or env.get("AWS_REGION") or env.get("AWS_DEFAULT_REGION"),
            "endpoint_url": self._credentials["endpoint_url"] or env.get("AWS_ENDPOINT_URL_KINESIS"),
        }
        self._client = boto3.client("kinesis", **{k: v for k, v in params.items() if v}, **self._kwargs)
        try:
            self._client.describe_stream_summary(StreamName=self._stream)
        except self._client.exceptions.ResourceNotFoundException:
            raise KinesisStreamNotFoundError(f"Kinesis stream {self._stream!r} does not exist") from None
        # one sender thread: PutRecords calls go out in order (records of a partition key keep
        # their order across calls) while add() keeps buffering
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="kinesis-sink")

    def add(self, value: Any, key: Any, timestamp: int, headers: Headers, topic: str, partition: int, offset: int) -> None:
        data = self._value_serializer(value)
        self._buffer.append({"Data": data.encode() if isinstance(data, str) else data, "PartitionKey": self._key_serializer(key)})
        if len(self._buffer) >= _MAX_RECORDS:
            self._send()

    def _send(self) -> None:
        records, self._buffer = self._buffer, []
        if self._executor is None:
            self.setup()
        assert self._executor is not None
        self._futures.append(self._executor.submit(self._put, records))

    def _put(self, records: list[dict[str, Any]]) -> None:
        for attempt in range(_ATTEMPTS):
            answer = self._client.put_records(StreamName=self._stream, Records=records)
            if not answer.get("FailedRecordCount"):
                return
            records = [r for r, res in zip(records, answer["Records"]) if res.get("ErrorCode")]
            logger.info("KinesisSink: %d record(s) throttled/refused, retrying", len(records))
            time.sleep(min(0.2 * 2**attempt, 3.0))
        raise RuntimeError(f"KinesisSink: {len(records)} record(s) still refused by {self._stream!r} after {_ATTEMPTS} attempts")

    def flush(self) -> None:
        """Send what is buffered and wait for every PutRecords call of this flush."""
        if self._buffer:
            self._send()
        futures, self._futures = self._futures, []
        errors = []
        for fut in futures:
            try:
                fut.result()
            except Exception as exc:  # wait for all before failing
                errors.append(exc)
        if errors:
            raise errors[0]

    def on_paused(self) -> None:
        self._buffer.clear()
