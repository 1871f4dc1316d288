"""Compressions of files read by file sources: ``"gzip"`` (alias ``"gz"``).

>>> sorted(COMPRESSION_MAPPER)
['gz', 'gzip']
"""

from __future__ import annotations

from .base import CompressionName, Decompressor
from .gzip import GZipDecompressor

__all__ = ("CompressionName", "Decompressor", "GZipDecompressor", "COMPRESSION_MAPPER", "resolve_decompressor")

#: compression name -> its decompressor class
COMPRESSION_MAPPER: dict[str, type[Decompressor]] = {"gz": GZipDecompressor, "gzip": GZipDecompressor}


def resolve_decompressor(compression: str) -> Decompressor:
    """The decompressor of a compression name.

    :raises ValueError: the name is unknown.
    """
    try:
        return COMPRESSION_MAPPER[compression]()
    except (KeyError, TypeError):
        raise ValueError(f"Unknown compression {compression!r}; use one of {sorted(COMPRESSION_MAPPER)} or None") from None
