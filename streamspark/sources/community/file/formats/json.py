"""JSON Lines files: one JSON object per line.

>>> import io
>>> list(JSONFormat(compression=None).deserialize(io.BytesIO(b'{"_key": "k", "_value": {"a": 1}, "_timestamp": 5}\\n')))
[{'_key': 'k', '_value': {'a': 1}, '_timestamp': 5}]
"""

from __future__ import annotations

import json
from typing import Any, BinaryIO, Callable, Iterator, Optional

import orjson

from ..compressions import CompressionName
from .base import Format

__all__ = ("JSONFormat",)


class JSONFormat(Format):
    """Read JSON Lines files (blank lines are skipped).

    :param compression: the files' compression (``"gzip"``/``"gz"``) or None.
    :param loads: a custom ``str -> dict`` parser of one line (default: orjson, with the
        standard parser for lines orjson refuses, so ``NaN`` and ``Infinity`` are read).
    :raises ValueError: (when reading) a line is not valid JSON or not an object; the message
        gives the line number.
    """

    def __init__(self, compression: Optional[CompressionName], loads: Optional[Callable[[str], dict]] = None) -> None:
        super().__init__(compression)
        self._loads = loads

    def deserialize(self, filestream: BinaryIO) -> Iterator[dict]:
        loads = self._loads
        for number, line in enumerate(filestream, start=1):
            if not line.strip():
                continue
            try:
                record = loads(line.decode("utf-8")) if loads is not None else _parse(line)
            except Exception as exc:
                raise ValueError(f"line {number} is not valid JSON: {exc}") from exc
            if not isinstance(record, dict):
                raise ValueError(f"line {number} is not a JSON object: {line[:80]!r}")
            yield record


def _parse(line: bytes) -> Any:
    """One JSON line; lines orjson refuses (``NaN``, ``Infinity``) go to the standard parser."""
    try:
        return orjson.loads(line)
    except orjson.JSONDecodeError:
        return json.loads(line)
