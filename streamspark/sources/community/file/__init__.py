"""File sources: the records of JSON Lines or Parquet files (optionally gzip), as written by
``FileSink``, produced to a topic -- from the local filesystem, an S3 bucket or an Azure container.

>>> from streamspark.sources.community.file import LocalFileSource, S3FileSource, AzureFileSource
"""

from .azure import AzureFileSource, MissingAzureContainer
from .base import FileSource
from .compressions import CompressionName, Decompressor, GZipDecompressor
from .formats import Format, FormatName, JSONFormat, ParquetFormat
from .local import LocalFileSource
from .s3 import MissingS3Bucket, S3FileSource

__all__ = (
    "FileSource",
    "LocalFileSource",
    "S3FileSource",
    "AzureFileSource",
    "MissingS3Bucket",
    "MissingAzureContainer",
    "Format",
    "FormatName",
    "JSONFormat",
    "ParquetFormat",
    "CompressionName",
    "Decompressor",
    "GZipDecompressor",
)
