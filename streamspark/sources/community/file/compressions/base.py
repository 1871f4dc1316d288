"""How a compressed file is turned back into its bytes.

>>> import gzip, io
>>> from .gzip import GZipDecompressor
>>> GZipDecompressor().decompress(io.BytesIO(gzip.compress(b"data")))
b'data'
"""

from __future__ import annotations

import abc
from typing import BinaryIO, Literal

__all__ = ("Decompressor", "CompressionName")

#: the compression names a file source accepts
CompressionName = Literal["gz", "gzip"]


class Decompressor(abc.ABC):
    """Decompresses a whole file stream."""

    @abc.abstractmethod
    def decompress(self, filestream: BinaryIO) -> bytes:
        """The decompressed bytes of ``filestream``."""
