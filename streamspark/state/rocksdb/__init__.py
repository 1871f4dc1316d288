"""Quix Streams' RocksDB store options, for programs that build them (see :mod:`.options`)."""

from .options import CompressionType, RocksDBOptions

__all__ = ("RocksDBOptions", "CompressionType")
