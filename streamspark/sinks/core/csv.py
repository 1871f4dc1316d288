"""``CSVSink``: append records to one CSV file."""

from __future__ import annotations

import csv
import fcntl
import io
import json
import os
from typing import Any, Callable

from ..base.batch import SinkBatch
from ..base.sink import BatchingSink

__all__ = ("CSVSink",)


class CSVSink(BatchingSink):
    """Write records of all partitions into one CSV file with columns
    ``key, value, timestamp, topic, partition, offset``.

    Writers in several Spark tasks append under an exclusive file lock, one whole batch at
    a time, so lines never interleave. On a cluster, ``path`` must be on a filesystem every
    executor shares. Guarantee: at-least-once (a replayed micro-batch appends its rows again).

    :param path: the CSV file; created with a header row when missing (a file that exists,
        even an empty one, gets no header).
    :param dialect: a ``csv`` dialect name.
    :param key_serializer: turns the key into text (``str`` by default).
    :param value_serializer: turns the value into text (``json.dumps`` by default).

    >>> sink = CSVSink("out.csv")  # doctest: +SKIP
    >>> sdf.sink(sink)  # doctest: +SKIP
    """

    def __init__(
        self,
        path: str,
        dialect: str = "excel",
        key_serializer: Callable[[Any], str] = str,
        value_serializer: Callable[[Any], str] = json.dumps,
    ) -> None:
        super().__init__()
        self.path = os.fspath(path)
        self.dialect = dialect
        self._key_serializer = key_serializer
        self._value_serializer = value_serializer

    def write(self, batch: SinkBatch) -> None:
        buffer = io.StringIO()
        writer = csv.writer(buffer, dialect=self.dialect)
        for item in batch:
            writer.writerow(
                [
                    self._key_serializer(item.key),
                    self._value_serializer(item.value),
                    item.timestamp,
                    batch.topic,
                    batch.partition,
                    item.offset,
                ]
            )
        data = buffer.getvalue()
        # as the reference: the header goes only into a file this write creates (a file that
        # already exists, even empty, gets none); under the lock, only the first writer adds it
        created = not os.path.exists(self.path)
        with open(self.path, "a", newline="") as f:
            fcntl.flock(f, fcntl.LOCK_EX)
            try:
                if created and f.seek(0, os.SEEK_END) == 0:
                    header = io.StringIO()
                    csv.writer(header, dialect=self.dialect).writerow(
                        ["key", "value", "timestamp", "topic", "partition", "offset"]
                    )
                    f.write(header.getvalue())
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
            finally:
                fcntl.flock(f, fcntl.LOCK_UN)
