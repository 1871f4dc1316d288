"""``CSVSource``: each row of a CSV file becomes one JSON message.

>>> source = CSVSource("readings.csv", name="readings", key_extractor=lambda row: row["id"])
>>> topic = source.default_topic()
>>> topic.name, topic.serialize(key="1", value={"id": "1", "t": "20"}).value
('readings', b'{"id":"1","t":"20"}')
"""

from __future__ import annotations

import csv
import logging
import time
from pathlib import Path
from typing import Any, Callable, Optional, Union

from ...models.topics import Topic
from ..base.exceptions import SourceInputError
from ..base.source import Source, string_keyed_json_topic

__all__ = ("CSVSource",)

logger = logging.getLogger(__name__)


class CSVSource(Source):
    """Read a CSV file (first line: the column names) and produce each row as a JSON object.

    Values are the row's strings as read. A row with more fields than the header stops the
    source with :class:`SourceInputError` naming the file and line (a shorter row gets
    ``None`` for the missing columns, as ``csv.DictReader`` gives). The file is read as UTF-8
    (a byte-order mark is skipped).

    :param path: the CSV file.
    :param name: the source's unique name (its default topic is ``source__<name>``).
    :param key_extractor: ``f(row) -> str | bytes``: the message key (default: no key).
    :param timestamp_extractor: ``f(row) -> int``: the message timestamp in milliseconds
        (default: the time of producing).
    :param delay: seconds to sleep after each row (to simulate a stream).
    :param shutdown_timeout: seconds the application waits for the source to stop.
    :param dialect: a :mod:`csv` dialect name (quoting, delimiter), or a ``csv.Dialect``
        (class or instance) as ``csv.DictReader`` takes it; default ``"excel"``.
    """

    def __init__(
        self,
        path: Union[str, Path],
        name: str,
        key_extractor: Optional[Callable[[dict], Union[str, bytes]]] = None,
        timestamp_extractor: Optional[Callable[[dict], int]] = None,
        delay: float = 0,
        shutdown_timeout: float = 10,
        dialect: Union[str, csv.Dialect, type[csv.Dialect]] = "excel",
    ) -> None:
        super().__init__(name=name, shutdown_timeout=shutdown_timeout)
        if isinstance(dialect, str):
            if dialect not in csv.list_dialects():
                raise ValueError(f"Unknown CSV dialect {dialect!r}; use one of {sorted(csv.list_dialects())}")
        elif not isinstance(dialect, csv.Dialect) and not (isinstance(dialect, type) and issubclass(dialect, csv.Dialect)):
            raise TypeError(f"dialect must be a csv dialect name or a csv.Dialect, got {dialect!r}")
        self.path = path
        self.key_extractor = key_extractor
        self.timestamp_extractor = timestamp_extractor
        self.delay = delay
        self.dialect = dialect

    def run(self) -> None:
        path = str(self.path)
        try:
            f = open(path, newline="", encoding="utf-8-sig")
        except OSError as exc:
            raise SourceInputError(self.name, f'the file "{path}"', exc.strerror or str(exc)) from exc
        with f:
            logger.info('Source "%s" producing the rows of "%s"', self.name, path)
            try:
                reader = csv.DictReader(f, dialect=self.dialect)
            except csv.Error as exc:  # a dialect registered only in the application's process
                raise SourceInputError(self.name, f'"{path}"', str(exc)) from exc
            while self.running:
                try:
                    row = next(reader)
                except StopIteration:
                    return
                except (csv.Error, UnicodeDecodeError) as exc:
                    raise SourceInputError(self.name, f'"{path}" line {reader.line_num}', str(exc)) from exc
                if None in row:
                    raise SourceInputError(
                        self.name,
                        f'"{path}" line {reader.line_num}',
                        f"{len(reader.fieldnames or ()) + len(row[None])} fields, the header has "  # type: ignore[index]
                        f"{len(reader.fieldnames or ())}",
                    )
                self._produce_row(row, path, reader.line_num)
                if self.delay > 0:
                    time.sleep(self.delay)

    def _produce_row(self, row: dict[str, Any], path: str, line: int) -> None:
        try:
            key = self.key_extractor(row) if self.key_extractor else None
            timestamp = self.timestamp_extractor(row) if self.timestamp_extractor else None
        except Exception as exc:
            raise SourceInputError(self.name, f'"{path}" line {line}', f"an extractor failed: {exc!r}") from exc
        # bytes keys go out as they are; str keys through the topic's key serializer
        raw_key = isinstance(key, bytes)
        msg = self.serialize(key=None if raw_key else key, value=row, timestamp_ms=timestamp)
        self.produce(key=key if raw_key else msg.key, value=msg.value, timestamp=msg.timestamp)

    def default_topic(self) -> Topic:
        """``<name>`` with string keys and JSON values."""
        return string_keyed_json_topic(self.name)
