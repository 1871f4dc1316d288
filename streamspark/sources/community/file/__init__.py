"""File sources: the records of JSON Lines or Parquet files (optionally gzip), as written by
``FileSink``, produced to a topic.

>>> from streamspark.sources.community.file import LocalFileSource
"""

from .base import FileSource
from .compressions import CompressionName, Decompressor, GZipDecompressor
from .formats import Format, FormatName, JSONFormat, ParquetFormat
from .local import LocalFileSource

__all__ = (
    "FileSource",
    "LocalFileSource",
    "Format",
    "FormatName",
    "JSONFormat",
    "ParquetFormat",
    "CompressionName",
    "Decompressor",
    "GZipDecompressor",
)
