"""Reading a Kinesis stream: every shard in turn, checkpointing the sequence numbers read.

:class:`KinesisConsumer` polls the shards of a stream round-robin and hands each record to a
processor; :class:`KinesisCheckpointer` keeps the last sequence number per shard in a
:class:`~streamspark.sources.StatefulSource`'s state and commits it with the messages
produced (``flush``) every ``commit_interval`` seconds.

>>> _OFFSET_RESET["earliest"], _OFFSET_RESET["latest"]
('TRIM_HORIZON', 'LATEST')
"""

from __future__ import annotations

import logging
import time
from typing import Any, Callable, Literal, Optional, TypedDict

from ...base.source import StatefulSource
from .._client import import_client

__all__ = (
    "KinesisConsumer",
    "KinesisCheckpointer",
    "KinesisStreamShardsNotFound",
    "AWSCredentials",
    "AutoOffsetResetType",
    "KinesisRecord",
)

logger = logging.getLogger(__name__)

AutoOffsetResetType = Literal["earliest", "latest"]
#: a record as ``GetRecords`` returns it: ``Data`` (bytes), ``PartitionKey``, ``SequenceNumber``,
#: ``ApproximateArrivalTimestamp`` (datetime)
KinesisRecord = dict[str, Any]

_OFFSET_RESET = {"earliest": "TRIM_HORIZON", "latest": "LATEST"}
_THROTTLED = ("ProvisionedThroughputExceededException", "LimitExceededException")


class KinesisStreamShardsNotFound(Exception):
    """Raised when the Kinesis stream has no shards."""


class AWSCredentials(TypedDict):
    """Where and as whom the Kinesis client connects (None: the client's own lookup)."""

    endpoint_url: Optional[str]
    region_name: Optional[str]
    aws_access_key_id: Optional[str]
    aws_secret_access_key: Optional[str]


class KinesisCheckpointer:
    """The last sequence number read per shard, kept in a stateful source's state.

    :meth:`commit` flushes the source (its messages, then the state with them) when
    ``commit_interval`` seconds passed since the previous commit, or when forced.

    :param stateful_source: the source whose state holds the sequence numbers.
    :param commit_interval: seconds between commits.
    """

    def __init__(self, stateful_source: StatefulSource, commit_interval: float = 5.0) -> None:
        self._source = stateful_source
        self._commit_interval = commit_interval
        self._last_committed_at = time.monotonic()

    @property
    def last_committed_at(self) -> float:
        """``time.monotonic()`` of the last commit (or of the checkpointer's creation)."""
        return self._last_committed_at

    def get(self, shard_id: str) -> Optional[str]:
        """The last sequence number read from the shard, if any."""
        return self._source.state.get(shard_id)

    def set(self, shard_id: str, sequence_number: str) -> None:
        """Record a shard's last sequence number read (committed by the next :meth:`commit`)."""
        self._source.state.set(shard_id, sequence_number)

    def commit(self, force: bool = False) -> None:
        """Flush the source when ``commit_interval`` has passed (or ``force``)."""
        now = time.monotonic()
        if force or now - self._last_committed_at > self._commit_interval:
            self._source.flush()
            self._last_committed_at = now


class KinesisConsumer:
    """Consume all shards of a Kinesis stream in a batched, round-robin fashion, checkpointing
    each record's sequence number with a :class:`KinesisCheckpointer`.

    A shard resumes after its checkpointed sequence number; a shard without one starts at
    ``auto_offset_reset`` (``"earliest"``: its oldest record, ``"latest"``: new records only).
    A throttled shard is skipped for ``backoff_secs``; an expired shard iterator is renewed
    from the checkpoint; when a shard closes (resharding), the shards are listed again and new
    ones are read from their beginning.

    Use it as a context manager: entering creates the client and the shard iterators.

    :param stream_name: the stream.
    :param credentials: the client's endpoint, region and keys.
    :param message_processor: called with each record.
    :param checkpointer: keeps the sequence numbers.
    :param auto_offset_reset: where shards without a checkpoint start.
    :param max_records_per_shard: the most records read from one shard per round.
    :param backoff_secs: how long a throttled shard is left alone.
    """

    def __init__(
        self,
        stream_name: str,
        credentials: AWSCredentials,
        message_processor: Callable[[KinesisRecord], None],
        checkpointer: KinesisCheckpointer,
        auto_offset_reset: AutoOffsetResetType = "latest",
        max_records_per_shard: int = 1000,
        backoff_secs: float = 5.0,
    ) -> None:
        if auto_offset_reset not in _OFFSET_RESET:
            raise ValueError(f'auto_offset_reset must be "earliest" or "latest", got {auto_offset_reset!r}')
        self._stream = stream_name
        self._credentials = credentials
        self._message_processor = message_processor
        self._checkpointer = checkpointer
        self._auto_offset_reset = _OFFSET_RESET[auto_offset_reset]
        self._max_records_per_shard = max_records_per_shard
        self._backoff_secs = backoff_secs
        self._shard_iterators: dict[str, str] = {}
        self._shard_backoff: dict[str, float] = {}
        self._closed_shards: set[str] = set()
        self._client: Any = None

    def __enter__(self) -> "KinesisConsumer":
        if self._client is None:
            boto3 = import_client("boto3", "KinesisSource", "kinesis")
            self._client = boto3.client("kinesis", **{k: v for k, v in self._credentials.items() if v})
            self._init_shards(self._auto_offset_reset)
        return self

    def __exit__(self, *exc_info: Any) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None

    def process_shards(self) -> int:
        """Read the next records of every shard in turn, hand each to the processor and
        checkpoint its sequence number; returns how many records were processed."""
        processed = 0
        for shard_id in list(self._shard_iterators):
            for record in self._poll_records(shard_id):
                self._message_processor(record)
                self._checkpointer.set(shard_id, record["SequenceNumber"])
                processed += 1
        return processed

    def commit(self, force: bool = False) -> None:
        """Commit the checkpoint (with the messages produced) when it is due, or now if ``force``."""
        self._checkpointer.commit(force=force)

    # --- shards ------------------------------------------------------------------------------
    def _list_shards(self) -> list[str]:
        answer = self._client.list_shards(StreamName=self._stream)
        shards = [s["ShardId"] for s in answer["Shards"]]
        while answer.get("NextToken"):
            answer = self._client.list_shards(NextToken=answer["NextToken"])
            shards.extend(s["ShardId"] for s in answer["Shards"])
        return shards

    def _shard_iterator(self, shard_id: str, start: str) -> str:
        sequence_number = self._checkpointer.get(shard_id)
        if sequence_number:
            kwargs = {"ShardIteratorType": "AFTER_SEQUENCE_NUMBER", "StartingSequenceNumber": sequence_number}
        else:
            kwargs = {"ShardIteratorType": start}
        return self._client.get_shard_iterator(StreamName=self._stream, ShardId=shard_id, **kwargs)["ShardIterator"]

    def _init_shards(self, start: str) -> None:
        shards = [s for s in self._list_shards() if s not in self._closed_shards]
        if not shards and not self._closed_shards:
            raise KinesisStreamShardsNotFound(f'Shards not found for stream "{self._stream}"')
        for shard_id in shards:
            if shard_id not in self._shard_iterators:
                self._shard_iterators[shard_id] = self._shard_iterator(shard_id, start)

    def _poll_records(self, shard_id: str) -> list[KinesisRecord]:
        if self._shard_backoff.get(shard_id, 0.0) > time.monotonic():
            return []
        exceptions = import_client("botocore.exceptions", "KinesisSource", "kinesis")
        try:
            answer = self._client.get_records(ShardIterator=self._shard_iterators[shard_id], Limit=self._max_records_per_shard)
        except exceptions.ClientError as exc:
            code = exc.response.get("Error", {}).get("Code", "")
            if code in _THROTTLED:
                logger.info("Kinesis shard %s of %r is throttled; backing off %ss", shard_id, self._stream, self._backoff_secs)
                self._shard_backoff[shard_id] = time.monotonic() + self._backoff_secs
                return []
            if code == "ExpiredIteratorException":
                logger.warning("The iterator of Kinesis shard %s of %r expired; renewing it", shard_id, self._stream)
                self._shard_iterators[shard_id] = self._shard_iterator(shard_id, self._auto_offset_reset)
                return []
            raise
        records: list[KinesisRecord] = answer.get("Records", [])
        following = answer.get("NextShardIterator")
        if following:
            self._shard_iterators[shard_id] = following
        else:  # the shard is closed (resharded) and fully read: read its children from their start
            logger.info("Kinesis shard %s of %r is closed", shard_id, self._stream)
            del self._shard_iterators[shard_id]
            self._closed_shards.add(shard_id)
            self._init_shards("TRIM_HORIZON")
        self._shard_backoff.pop(shard_id, None)
        return records
