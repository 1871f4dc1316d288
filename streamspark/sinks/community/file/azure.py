"""``AzureFileSink``: :class:`~.sink.FileSink` writing to an Azure Blob Storage container
(``pip install streamspark[azure]``).

>>> sink = AzureFileSink(azure_connection_string="UseDevelopmentStorage=true", azure_container="exports")
"""

from __future__ import annotations

from typing import Optional, Union

from ...base.sink import ClientConnectFailureCallback, ClientConnectSuccessCallback
from .destinations import AzureFileDestination
from .formats import Format, FormatName
from .sink import FileSink

__all__ = ("AzureFileSink",)


class AzureFileSink(FileSink):
    """Write batches as blobs to an Azure Blob Storage container.

    :param azure_connection_string: the storage account's connection string.
    :param azure_container: the container name.
    :param directory: the base directory (blob name prefix) in the container.
    :param format: ``"json"``, ``"parquet"`` or a :class:`~.formats.Format`. Default ``"json"``.
    :param on_client_connect_success: called after the container is checked in ``setup()``.
    :param on_client_connect_failure: called with the exception when the check fails.
    """

    def __init__(
        self,
        azure_connection_string: str,
        azure_container: str,
        directory: str = "",
        format: Union[FormatName, Format] = "json",
        on_client_connect_success: Optional[ClientConnectSuccessCallback] = None,
        on_client_connect_failure: Optional[ClientConnectFailureCallback] = None,
    ) -> None:
        destination = AzureFileDestination(azure_connection_string, azure_container)
        super().__init__(directory, format, destination, on_client_connect_success, on_client_connect_failure)
