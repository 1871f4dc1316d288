"""The base class of file formats read by file sources.

A format turns a file stream into records ``{"_key": ..., "_value": ..., "_timestamp": ...}``
(the layout ``FileSink`` writes); the source's setters pick the message parts from them.
"""

from __future__ import annotations

import abc
import io
from typing import BinaryIO, Iterable, Literal, Optional

from ..compressions import CompressionName, Decompressor, resolve_decompressor

__all__ = ("Format", "FormatName")

#: the format names a file source accepts
FormatName = Literal["json", "parquet"]


class Format(abc.ABC):
    """Reads files written in one format (optionally compressed).

    Subclasses call ``super().__init__(compression)`` and implement :meth:`deserialize`.

    :param compression: the files' compression (``"gzip"``/``"gz"``) or None.
    """

    @abc.abstractmethod
    def __init__(self, compression: Optional[CompressionName] = None) -> None:
        self._decompressor: Optional[Decompressor] = resolve_decompressor(compression) if compression else None

    @abc.abstractmethod
    def deserialize(self, filestream: BinaryIO) -> Iterable[dict]:
        """The records of an (uncompressed) file stream, each
        ``{"_key": ..., "_value": ..., "_timestamp": ...}``.

        :raises ValueError: the content is not valid (the message says where).
        """

    def read(self, filestream: BinaryIO) -> Iterable[dict]:
        """Decompress (when the format has a compression) and deserialize a file stream."""
        if self._decompressor is not None:
            filestream = io.BytesIO(self._decompressor.decompress(filestream))
        return self.deserialize(filestream)
