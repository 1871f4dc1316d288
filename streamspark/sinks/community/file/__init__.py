"""File sink: JSON Lines or Parquet files per topic partition and batch, locally, on S3 or Azure Blob."""

from .destinations import (
    AzureContainerAccessDeniedError,
    AzureContainerNotFoundError,
    AzureFileDestination,
    Destination,
    LocalDestination,
    S3BucketAccessDeniedError,
    S3BucketNotFoundError,
    S3Destination,
)
from .formats import Format, InvalidFormatError, JSONFormat, ParquetFormat
from .azure import AzureFileSink
from .local import LocalFileSink
from .s3 import S3FileSink
from .sink import FileSink

__all__ = (
    "FileSink",
    "LocalFileSink",
    "S3FileSink",
    "AzureFileSink",
    "Format",
    "JSONFormat",
    "ParquetFormat",
    "InvalidFormatError",
    "Destination",
    "LocalDestination",
    "S3Destination",
    "AzureFileDestination",
    "S3BucketNotFoundError",
    "S3BucketAccessDeniedError",
    "AzureContainerNotFoundError",
    "AzureContainerAccessDeniedError",
)
