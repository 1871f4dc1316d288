"""gzip decompression (concatenated members, as appending writers produce, are read in full)."""

from __future__ import annotations

import gzip
from typing import BinaryIO

from .base import Decompressor

__all__ = ("GZipDecompressor",)


class GZipDecompressor(Decompressor):
    """Decompress a gzip file stream.

    :raises ValueError: the stream is not valid gzip data.
    """

    def decompress(self, filestream: BinaryIO) -> bytes:
        try:
            return gzip.decompress(filestream.read())
        except (OSError, EOFError) as exc:  # BadGzipFile is an OSError; a truncated file an EOFError
            raise ValueError(f"not valid gzip data ({exc})") from exc
