"""Compression of a state bucket's blob on its way into Spark's state store.

Every micro-batch that touches a state bucket moves the bucket's whole blob out of Spark's
state store, through the JVM to the Python worker and back, and writes it again with the
state store's changelog. Spark hands a binary state value to Python a byte at a time (through
Pyrolite's pickler), so that move costs in proportion to the blob's bytes, while a pickled
bucket of state compresses about six to seven times with Zstandard at a small fraction of that
cost. :func:`pack` compresses a blob (Zstandard, through pyarrow, which PySpark's Arrow
support already needs); :func:`unpack` gives the blob back, and passes a blob stored
uncompressed (by an earlier version, or with the ``compressed-state`` fast path left out)
through as it is: a pickled blob begins with the pickle protocol byte, never with
:data:`MAGIC`.

>>> import pickle
>>> blob = pickle.dumps({b"user-%d" % i: i for i in range(1000)}, protocol=5)
>>> packed = pack(blob)
>>> packed[:4] == MAGIC, len(packed) < len(blob), unpack(packed) == blob
(True, True, True)
>>> unpack(blob) == blob
True
"""

from __future__ import annotations

import struct
import zlib

from .exceptions import StateError

__all__ = ("MAGIC", "MIN_PACKED_SIZE", "pack", "unpack")

#: the first bytes of a compressed blob (a pickled blob begins with ``0x80``); then the blob's
#: length and a CRC-32 of that length and the compressed bytes (Zstandard frames as pyarrow
#: writes them carry no checksum, and a damaged frame can decompress into other bytes)
MAGIC = b"SSZ\x01"

#: blobs shorter than this are stored as they are (compressing them gains too little)
MIN_PACKED_SIZE = 4096

_LENGTH = struct.Struct("<Q")
_CRC = struct.Struct("<I")
_HEADER = len(MAGIC) + _LENGTH.size + _CRC.size
_CODEC = "zstd"


def _codec_available() -> bool:
    import pyarrow as pa

    return bool(pa.Codec.is_available(_CODEC))


def pack(blob: bytes) -> bytes:
    """``blob`` compressed, behind :data:`MAGIC`, its own length and a checksum; as it is when
    it is short (under :data:`MIN_PACKED_SIZE` bytes), does not compress, or this pyarrow has
    no Zstandard codec.

    :param blob: a pickled state blob (begins with the pickle protocol byte).

    >>> import os
    >>> noise = os.urandom(8192)
    >>> pack(noise) == noise, pack(bytes(8192))[:4] == MAGIC
    (True, True)
    """
    if len(blob) < MIN_PACKED_SIZE or not _codec_available():
        return blob
    import pyarrow as pa

    compressed = pa.compress(blob, codec=_CODEC, asbytes=True)
    if len(compressed) + _HEADER >= len(blob):  # incompressible: stored as it is
        return blob
    length = _LENGTH.pack(len(blob))
    return MAGIC + length + _CRC.pack(zlib.crc32(compressed, zlib.crc32(length))) + compressed


def unpack(data: bytes | bytearray) -> bytes | bytearray:
    """The blob :func:`pack` was given (``data`` itself when it was stored uncompressed).

    :param data: a stored state value (Spark hands it to Python as a ``bytearray``).
    :raises StateError: a compressed blob that was cut short or altered, or that this pyarrow
        cannot decompress.

    >>> unpack(MAGIC + b"\\x00" * 3)
    Traceback (most recent call last):
    ...
    streamspark.state.exceptions.StateError: A compressed state blob is cut short (7 bytes); the checkpoint's state is damaged
    >>> damaged = bytearray(pack(bytes(10_000)))
    >>> damaged[-1] ^= 1
    >>> unpack(damaged)
    Traceback (most recent call last):
    ...
    streamspark.state.exceptions.StateError: A compressed state blob does not match its checksum; the checkpoint's state is damaged
    """
    if bytes(data[: len(MAGIC)]) != MAGIC:
        return data
    if len(data) < _HEADER:
        raise StateError(f"A compressed state blob is cut short ({len(data)} bytes); the checkpoint's state is damaged")
    length = bytes(data[len(MAGIC) : len(MAGIC) + _LENGTH.size])
    (size,) = _LENGTH.unpack(length)
    (crc,) = _CRC.unpack_from(data, len(MAGIC) + _LENGTH.size)
    # one copy of the compressed bytes (a slice of a bytearray would be a second), and no view
    # left on the caller's bytearray
    payload = bytes(memoryview(data)[_HEADER:])
    if zlib.crc32(payload, zlib.crc32(length)) != crc:
        raise StateError("A compressed state blob does not match its checksum; the checkpoint's state is damaged")
    if not _codec_available():
        raise StateError(
            f"The checkpoint's state is compressed with {_CODEC}, which this pyarrow cannot decompress; "
            "install a pyarrow build with Zstandard (the PyPI wheels have it)"
        )
    import pyarrow as pa

    try:
        blob = pa.decompress(payload, decompressed_size=size, codec=_CODEC, asbytes=True)
    except (OSError, ValueError, OverflowError, pa.ArrowException) as exc:
        raise StateError(f"A compressed state blob could not be decompressed ({exc}); the checkpoint's state is damaged") from exc
    if len(blob) != size:
        raise StateError(
            f"A compressed state blob gave {len(blob)} bytes, not the {size} it recorded; the checkpoint's state is damaged"
        )
    return blob
