"""Where ``FileSink`` writes: the local filesystem, S3 (and S3-compatible stores) or Azure Blob.

>>> from streamspark.sinks.community.file.formats import JSONFormat
>>> d = LocalDestination(); d.set_directory("out/data"); d.set_extension(JSONFormat())
>>> from streamspark.sinks.community.file.destinations.s3 import S3Destination
"""

from __future__ import annotations

from .azure import AzureContainerAccessDeniedError, AzureContainerNotFoundError, AzureFileDestination
from .base import Destination, ObjectStoreDestination
from .local import LocalDestination
from .s3 import S3BucketAccessDeniedError, S3BucketNotFoundError, S3Destination

__all__ = (
    "Destination",
    "ObjectStoreDestination",
    "LocalDestination",
    "S3Destination",
    "AzureFileDestination",
    "S3BucketNotFoundError",
    "S3BucketAccessDeniedError",
    "AzureContainerNotFoundError",
    "AzureContainerAccessDeniedError",
)
