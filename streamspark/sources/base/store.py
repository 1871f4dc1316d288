"""The state of a :class:`StatefulSource`: in memory, persisted to a compacted changelog topic.

Every ``flush()`` of the source writes the entries that changed since the previous one to the
changelog, with the same producer as the source's messages. A restarted source reads the
changelog back before it starts, so it resumes from its last flush.

- At-least-once: the producer flush delivers the messages and the changelog records together;
  a crash in between may leave messages whose state change was not recorded, so they are
  produced again after a restart.
- Exactly-once: the messages and the changelog records of one flush are one Kafka
  transaction, so a restart resumes exactly where the committed messages end.

>>> partition = SourceStorePartition("changelog", producer=None, name="ticks")
>>> tx = partition.begin(); tx.as_state().set("offset", 5); tx.changes()
{'offset': (0, b'5', None)}
"""

from __future__ import annotations

import logging
import time
from datetime import timedelta
from typing import Any, Optional

import orjson

from ...state.exceptions import StateError
from ...state.base import State
from .producer import SourceProducer

__all__ = ("SourceStorePartition", "SourceStoreTransaction", "SourceState", "changelog_topic_name", "transactional_id")

logger = logging.getLogger(__name__)

Entry = tuple[int, bytes, Optional[int]]


def _safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "._-" else "_" for c in name)


def changelog_topic_name(consumer_group: str, store_name: str) -> str:
    """The changelog topic of a stateful source's store.

    >>> changelog_topic_name("my app", "source-ticks")
    'changelog__my_app--source-ticks'
    """
    return f"changelog__{_safe(consumer_group)}--{_safe(store_name)}"[:249]


def transactional_id(consumer_group: str, store_name: str) -> str:
    """The ``transactional.id`` of a stateful source under exactly-once (stable across restarts)."""
    return f"streamspark-{consumer_group}-{store_name}"


def _encode_key(key: Any) -> bytes:
    try:
        return orjson.dumps(key, option=orjson.OPT_NON_STR_KEYS)
    except TypeError as exc:
        raise StateError(f"A source's state key must be JSON-serialisable, got {key!r}: {exc}") from exc


def _hashable(value: Any) -> Any:
    if isinstance(value, list):
        return tuple(_hashable(v) for v in value)
    return value


def _encode_entry(entry: Entry) -> bytes:
    kind, data, expiry = entry
    return bytes([kind]) + (expiry if expiry is not None else -1).to_bytes(8, "big", signed=True) + data


def _decode_entry(raw: bytes) -> Entry:
    expiry = int.from_bytes(raw[1:9], "big", signed=True)
    return raw[0], raw[9:], None if expiry < 0 else expiry


class SourceState(State[Any, Any]):
    """The :class:`State` of a stateful source, valid until the source's next ``flush()``."""

    __slots__ = ("_open",)

    def __init__(self, data: dict[Any, Entry], step: str) -> None:
        super().__init__(data, step)
        self._open = True

    def close(self) -> None:
        self._open = False

    def _check(self) -> None:
        if not self._open:
            raise StateError(f"This State of {self._step} was invalidated by flush(); read `self.state` again")

    def get(self, key: Any, default: Any = None) -> Any:
        self._check()
        return super().get(key, default)

    def set(self, key: Any, value: Any, *, ttl: Optional[timedelta] = None) -> None:
        self._check()
        super().set(key, value, ttl=ttl)

    def get_bytes(self, key: Any, default: Optional[bytes] = None) -> Optional[bytes]:
        self._check()
        return super().get_bytes(key, default)

    def set_bytes(self, key: Any, value: bytes, *, ttl: Optional[timedelta] = None) -> None:
        self._check()
        super().set_bytes(key, value, ttl=ttl)

    def delete(self, key: Any) -> None:
        self._check()
        super().delete(key)

    def exists(self, key: Any) -> bool:
        self._check()
        return super().exists(key)


class SourceStoreTransaction:
    """The changes of a stateful source between two flushes (a working copy of the state)."""

    def __init__(self, partition: "SourceStorePartition") -> None:
        self._partition = partition
        self._data: dict[Any, Entry] = dict(partition.data)
        self._state: Optional[SourceState] = None
        self._done = False

    def as_state(self) -> SourceState:
        if self._done:
            raise StateError("The transaction of this source's state is complete; read `self.state` again")
        if self._state is None:
            self._state = SourceState(self._data, f'source "{self._partition.name}"')
        return self._state

    def changes(self) -> dict[Any, Optional[Entry]]:
        """``{key: entry}`` of what was set since the transaction began, ``{key: None}`` for deletions."""
        committed = self._partition.data
        out: dict[Any, Optional[Entry]] = {k: v for k, v in self._data.items() if committed.get(k) != v}
        out.update({k: None for k in committed if k not in self._data})
        return out

    def prepare(self) -> int:
        """Produce the changes to the changelog (in the producer's open transaction, if any);
        returns how many records were produced."""
        changes = self.changes()
        producer = self._partition.producer
        if changes and producer is None:
            raise StateError("The source's state has no changelog producer")
        for key, entry in changes.items():
            assert producer is not None
            producer.produce(
                self._partition.changelog_topic,
                key=_encode_key(key),
                value=None if entry is None else _encode_entry(entry),
                partition=self._partition.partition,
            )
        return len(changes)

    def flush(self) -> None:
        """Make the transaction's state the committed one (after the producer flush or commit)."""
        self._partition.data = self._data
        self._close()

    def abort(self) -> None:
        self._close()

    def _close(self) -> None:
        self._done = True
        if self._state is not None:
            self._state.close()


class SourceStorePartition:
    """The state of one stateful source: entries in memory, changes written to ``changelog_topic``.

    :param changelog_topic: the compacted topic holding the state's changes.
    :param producer: the source's producer (the changelog is written with its messages).
    :param name: the source's name (for messages).
    :param partition: the changelog partition of this source.
    """

    def __init__(self, changelog_topic: str, producer: Optional[SourceProducer], name: str, partition: int = 0) -> None:
        self.changelog_topic = changelog_topic
        self.producer = producer
        self.name = name
        self.partition = partition
        self.data: dict[Any, Entry] = {}

    def begin(self) -> SourceStoreTransaction:
        return SourceStoreTransaction(self)

    def recover(self, consumer_config: dict[str, Any], timeout: float) -> int:
        """Load the committed state from the changelog (read_committed, from its beginning to its
        end); returns the number of changelog records read.

        :raises StateError: the changelog could not be read within ``timeout`` seconds of no progress.
        """
        from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaError, KafkaException, TopicPartition

        consumer = Consumer(
            {
                **consumer_config,
                "group.id": f"{self.changelog_topic}--recovery",
                "enable.auto.commit": False,
                "isolation.level": "read_committed",
                "auto.offset.reset": "earliest",
            }
        )
        read = 0
        try:
            tp = TopicPartition(self.changelog_topic, self.partition)
            try:
                low, high = consumer.get_watermark_offsets(tp, timeout=timeout, cached=False)
            except KafkaException as exc:
                raise StateError(f'Cannot read the changelog "{self.changelog_topic}" of source "{self.name}": {exc}') from exc
            if high <= low:
                return 0
            consumer.assign([TopicPartition(self.changelog_topic, self.partition, OFFSET_BEGINNING)])
            deadline = time.monotonic() + timeout
            position = low
            while position < high:
                msgs = consumer.consume(num_messages=10_000, timeout=0.5)
                if not msgs:
                    # transaction markers and compaction leave gaps: ask for the position
                    position = max(position, consumer.position([tp])[0].offset)
                    if position < high and time.monotonic() > deadline:
                        raise StateError(
                            f'The changelog "{self.changelog_topic}" of source "{self.name}" stopped at offset '
                            f"{position} of {high} for {timeout}s"
                        )
                    continue
                deadline = time.monotonic() + timeout
                for msg in msgs:
                    err = msg.error()
                    if err is not None:
                        if err.code() == KafkaError._PARTITION_EOF:  # noqa: SLF001
                            continue
                        raise StateError(f'Cannot read the changelog of source "{self.name}": {err}')
                    position = (msg.offset() or 0) + 1
                    read += 1
                    key = _hashable(orjson.loads(msg.key() or b"null"))
                    value = msg.value()
                    if value is None:
                        self.data.pop(key, None)
                    else:
                        self.data[key] = _decode_entry(value)
        finally:
            consumer.close()
        logger.info('Source "%s" recovered %d state entries from "%s"', self.name, len(self.data), self.changelog_topic)
        return read
