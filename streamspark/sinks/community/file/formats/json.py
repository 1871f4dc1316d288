"""``JSONFormat``: JSON Lines, optionally gzip-compressed; appendable.

>>> from streamspark.sinks.base import SinkBatch
>>> batch = SinkBatch("t", 0); batch.append(value={"a": 1}, key=b"k", timestamp=5, headers=None, offset=0)
>>> JSONFormat().serialize(batch)
b'{"_timestamp":5,"_key":"k","_value":{"a":1}}\\n'
"""

from __future__ import annotations

import gzip
import json
from typing import Any, Callable, Optional

import orjson

from ....base.batch import SinkBatch
from ..._values import key_text
from .base import Format

__all__ = ("JSONFormat",)


def _plain(obj: Any) -> Any:
    """Types the standard encoder lacks (datetimes, dataclasses, numpy values), as orjson writes them."""
    return orjson.loads(orjson.dumps(obj))


# compact, UTF-8 kept as is, NaN and infinities written as NaN / Infinity (as the reference's
# JSON Lines writer does; orjson would write null)
_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), default=_plain)


class JSONFormat(Format):
    """JSON Lines: one ``{"_timestamp", "_key", "_value"}`` object per record (bytes keys decoded).

    Compact JSON with non-ASCII text kept; float NaN and infinities are written as ``NaN``,
    ``Infinity`` and ``-Infinity``.

    :param file_extension: default ``.jsonl`` (``.gz`` is added when compressing).
    :param compress: gzip the output.
    :param dumps: a custom ``obj -> str`` serializer.
    """

    def __init__(
        self, file_extension: str = ".jsonl", compress: bool = False, dumps: Optional[Callable[[Any], str]] = None
    ) -> None:
        self._extension = file_extension + (".gz" if compress else "")
        self._compress = compress
        self._dumps = dumps

    @property
    def file_extension(self) -> str:
        return self._extension

    @property
    def supports_append(self) -> bool:
        return True  # JSON lines and gzip members both concatenate

    def serialize(self, batch: SinkBatch) -> bytes:
        lines = []
        for item in batch:
            obj = {"_timestamp": item.timestamp, "_key": key_text(item.key), "_value": item.value}
            lines.append((self._dumps or _ENCODER.encode)(obj).encode())
        data = b"\n".join(lines) + b"\n" if lines else b""
        return gzip.compress(data) if self._compress else data
