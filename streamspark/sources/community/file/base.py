"""``FileSource``: the records of files (local, or in object storage) produced as messages.

Subclasses say how to list and open files (:meth:`FileSource.get_file_list`,
:meth:`FileSource.read_file`); the base class reads each file's records in order and produces
them, pacing them by their timestamps (``replay_speed``).
"""

from __future__ import annotations

import abc
import logging
from pathlib import Path
from typing import Any, BinaryIO, Callable, Iterable, Iterator, Optional, Union

from ....models.topics import Topic, TopicConfig
from ...base.exceptions import SourceInputError
from ...base.source import ClientConnectFailureCallback, ClientConnectSuccessCallback, Source
from .components import FileFetcher, raw_filestream_deserializer
from .compressions import CompressionName
from .formats import Format, FormatName

__all__ = ("FileSource",)

logger = logging.getLogger(__name__)

#: gaps between records shorter than this (seconds, after ``replay_speed``) are not slept
_MIN_SLEEP = 0.01


def _default_key_setter(record: Any) -> Any:
    return record["_key"]


def _default_value_setter(record: Any) -> Any:
    return record["_value"]


def _default_timestamp_setter(record: Any) -> Any:
    return record["_timestamp"]


class FileSource(Source):
    """Produce the records of every file under a path, file after file, to one topic.

    It lists the files from ``filepath`` (a folder is walked recursively, in name order),
    fetches the next file in the background while the current one is produced, decompresses
    and deserializes each, and produces every record with the message parts its setters pick.
    Records default to the ``FileSink`` layout: ``{"_key", "_value", "_timestamp"}``.
    After each file the producer is flushed.

    With ``replay_speed`` > 0, the source sleeps between records for the gap between their
    timestamps times ``replay_speed`` (1: original pace, 0: no delay). Gaps are measured
    between consecutive records, so pacing holds within a partition folder, not across them.

    A file that cannot be read or parsed stops the source with :class:`SourceInputError`
    naming the file (and the line or record).

    :param filepath: a folder to walk, or a single file.
    :param key_setter: ``f(record) -> key`` (default: ``record["_key"]``).
    :param value_setter: ``f(record) -> value`` (default: ``record["_value"]``).
    :param timestamp_setter: ``f(record) -> int`` milliseconds (default: ``record["_timestamp"]``).
    :param file_format: ``"json"`` (JSON Lines), ``"parquet"`` or a :class:`Format`.
    :param compression: ``"gzip"``/``"gz"`` or None.
    :param has_partition_folders: files sit in one folder per topic partition
        (``<filepath>/<partition>/<file>``, as ``FileSink`` writes): the default topic gets as
        many partitions as there are folders. Records keep their original partition only if
        their keys are unchanged (they are partitioned by key).
    :param replay_speed: pacing multiplier (0, or a negative value, produces as fast as possible).
    :param name: the source's name (default ``file_<last part of filepath>``).
    :param shutdown_timeout: seconds the application waits for the source to stop.
    :param on_client_connect_success: called after ``setup()`` succeeded.
    :param on_client_connect_failure: called with the exception when ``setup()`` failed.
    """

    def __init__(
        self,
        filepath: Union[str, Path],
        key_setter: Optional[Callable[[object], object]] = None,
        value_setter: Optional[Callable[[object], object]] = None,
        timestamp_setter: Optional[Callable[[object], int]] = None,
        file_format: Union[Format, FormatName] = "json",
        compression: Optional[CompressionName] = None,
        has_partition_folders: bool = False,
        replay_speed: float = 1.0,
        name: Optional[str] = None,
        shutdown_timeout: float = 30,
        on_client_connect_success: Optional[ClientConnectSuccessCallback] = None,
        on_client_connect_failure: Optional[ClientConnectFailureCallback] = None,
    ) -> None:
        filepath = Path(filepath)
        super().__init__(
            name=name or f"file_{filepath.name}",
            shutdown_timeout=shutdown_timeout,
            on_client_connect_success=on_client_connect_success,
            on_client_connect_failure=on_client_connect_failure,
        )
        self._filepath = filepath
        self._key_setter = key_setter or _default_key_setter
        self._value_setter = value_setter or _default_value_setter
        self._timestamp_setter = timestamp_setter or _default_timestamp_setter
        self._has_partition_folders = has_partition_folders
        self._replay_speed = max(replay_speed, 0.0)  # a negative speed means no delay
        self._raw_filestream_deserializer = raw_filestream_deserializer(file_format, compression)
        self._previous_timestamp: Optional[int] = None
        self._current_item = ""

    @abc.abstractmethod
    def get_file_list(self, filepath: Path) -> Iterable[Path]:
        """Every file under ``filepath`` (a folder, walked recursively; a file is itself), in
        processing order."""

    @abc.abstractmethod
    def read_file(self, filepath: Path) -> BinaryIO:
        """The raw (possibly compressed) content of a file, as an open stream."""

    def file_partition_counter(self) -> int:
        """The number of partition folders under ``filepath`` (needed by
        ``has_partition_folders=True``).

        Example layout with 2 partitions::

            topic_name/
            ├── 0/
            │   ├── file_a.ext
            │   └── file_b.ext
            └── 1/
                └── file_x.ext
        """
        raise NotImplementedError(
            f'{type(self).__name__} must implement "file_partition_counter" to use has_partition_folders=True'
        )

    def _file_label(self, filepath: Path) -> str:
        """How errors and logs name a file (object stores add their bucket)."""
        return str(filepath)

    def default_topic(self) -> Topic:
        """``<name>`` with JSON values; with ``has_partition_folders``, one partition per folder."""
        topic = super().default_topic()
        if self._has_partition_folders:
            topic.create_config = TopicConfig(num_partitions=self.file_partition_counter(), replication_factor=1)
        return topic

    # --- producing ---------------------------------------------------------------------------
    def process_record(self, record: object) -> None:
        """Wait for the record's turn (``replay_speed``), serialize it and produce it."""
        try:
            timestamp = self._timestamp_setter(record)
            key = self._key_setter(record)
            value = self._value_setter(record)
        except Exception as exc:
            raise SourceInputError(self.name, self._current_item, f"a setter failed: {exc!r}") from exc
        self._handle_replay_delay(timestamp)
        msg = self.serialize(key=key, value=value, timestamp_ms=timestamp)
        self.produce(key=msg.key, value=msg.value, timestamp=msg.timestamp)

    def _handle_replay_delay(self, timestamp: Optional[int]) -> None:
        if timestamp is None:
            return
        previous, self._previous_timestamp = self._previous_timestamp, timestamp
        if previous is None or not self._replay_speed:
            return
        delay = (timestamp - previous) / 1000 * self._replay_speed
        if delay <= _MIN_SLEEP:
            return
        self._sleep(delay)

    def run(self) -> None:
        fetcher = FileFetcher(self._fetch, self._listed_files())
        try:
            while self.running:
                try:
                    filepath, stream = next(fetcher)
                except StopIteration:
                    logger.info('Source "%s" produced every file', self.name)
                    return
                self._produce_file(filepath, stream)
                self.flush()
        finally:
            fetcher.stop()

    def _listed_files(self) -> Iterator[Path]:
        try:
            yield from self.get_file_list(self._filepath)
        except SourceInputError:
            raise
        except Exception as exc:
            raise SourceInputError(self.name, f'the files under "{self._file_label(self._filepath)}"', str(exc)) from exc

    def _fetch(self, filepath: Path) -> BinaryIO:
        try:
            return self.read_file(filepath)
        except SourceInputError:
            raise
        except Exception as exc:
            reason = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
            raise SourceInputError(self.name, f'the file "{self._file_label(filepath)}"', reason) from exc

    def _produce_file(self, filepath: Path, stream: BinaryIO) -> None:
        label = self._file_label(filepath)
        logger.info('Source "%s" producing the records of "%s"', self.name, label)
        records: Optional[Iterator[object]] = None
        number = 0
        while self.running:
            try:
                if records is None:  # decompressing happens here: its errors name the file too
                    records = iter(self._raw_filestream_deserializer(stream))
                record = next(records)
            except StopIteration:
                return
            except Exception as exc:
                raise SourceInputError(self.name, f'the file "{label}"', str(exc)) from exc
            number += 1
            self._current_item = f'record {number} of "{label}"'
            self.process_record(record)
