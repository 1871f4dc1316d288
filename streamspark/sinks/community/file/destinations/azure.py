"""``AzureFileDestination``: blobs in an Azure Storage container.

>>> d = AzureFileDestination(connection_string="UseDevelopmentStorage=true", container="data")
"""

from __future__ import annotations

from .base import ObjectStoreDestination

__all__ = ("AzureFileDestination", "AzureContainerNotFoundError", "AzureContainerAccessDeniedError")


class AzureContainerNotFoundError(Exception):
    """The Azure container does not exist."""


class AzureContainerAccessDeniedError(Exception):
    """The Azure container exists but these credentials may not use it."""


class AzureFileDestination(ObjectStoreDestination):
    """Blobs in an Azure Storage container.

    :param connection_string: the storage account's connection string.
    :param container: the container (it must exist).
    """

    _scheme = "abfs"
    _what = "Azure container"
    _not_found = AzureContainerNotFoundError
    _denied = AzureContainerAccessDeniedError

    def __init__(self, connection_string: str, container: str) -> None:
        super().__init__(container, {"connection_string": connection_string})
