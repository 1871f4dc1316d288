"""``AzureFileSource``: the records of blobs in an Azure Storage container.

>>> source = AzureFileSource("UseDevelopmentStorage=true", container="lake", filepath="exports/readings")
>>> source.name
'azurefilestore_lake_readings'

Needs ``pip install "streamspark[azure]"`` (the Azure Blob client, ``azure-storage-blob``).
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any, BinaryIO, Callable, Iterable, Optional, Union

from ...base.exceptions import SourceInputError
from ...base.source import ClientConnectFailureCallback, ClientConnectSuccessCallback
from .._client import import_client
from .base import FileSource
from .compressions import CompressionName
from .formats import Format, FormatName
from .object_names import folder_prefix, is_under, object_name

__all__ = ("AzureFileSource", "MissingAzureContainer")


class MissingAzureContainer(SourceInputError):
    """The container of an :class:`AzureFileSource` does not exist."""


class AzureFileSource(FileSource):
    """Produce the records of the blobs under a name prefix of an Azure container (or of one blob).

    ``filepath`` is a "folder" (every blob whose name is under ``<filepath>/``, in name
    order) or one blob's name; blobs are read like :class:`LocalFileSource`'s files (each
    whole into memory, the next one while the current one is produced).

    ``setup()`` checks the container: a missing one stops the source with
    :class:`MissingAzureContainer`, an unreachable endpoint or a refused key with
    :class:`~streamspark.sources.SourceInputError`, both naming the source and the container.

    :param connection_string: the storage account's connection string.
    :param container: the container's name.
    :param filepath: the name prefix ("folder") to read, or one blob's name.
    :param name: the source's name (default ``azurefilestore_<container>_<last part of filepath>``).

    The other parameters are :class:`FileSource`'s.
    """

    _process_local_attributes = ("_client",)

    def __init__(
        self,
        connection_string: str,
        container: str,
        filepath: Union[str, Path],
        key_setter: Optional[Callable[[object], object]] = None,
        value_setter: Optional[Callable[[object], object]] = None,
        timestamp_setter: Optional[Callable[[object], int]] = None,
        file_format: Union[Format, FormatName] = "json",
        compression: Optional[CompressionName] = None,
        has_partition_folders: bool = False,
        replay_speed: float = 1.0,
        name: Optional[str] = None,
        shutdown_timeout: float = 30,
        on_client_connect_success: Optional[ClientConnectSuccessCallback] = None,
        on_client_connect_failure: Optional[ClientConnectFailureCallback] = None,
    ) -> None:
        super().__init__(
            filepath=filepath,
            key_setter=key_setter,
            value_setter=value_setter,
            timestamp_setter=timestamp_setter,
            file_format=file_format,
            compression=compression,
            has_partition_folders=has_partition_folders,
            replay_speed=replay_speed,
            name=name or f"azurefilestore_{container}_{Path(filepath).name}",
            shutdown_timeout=shutdown_timeout,
            on_client_connect_success=on_client_connect_success,
            on_client_connect_failure=on_client_connect_failure,
        )
        self._container = container
        self._connection_string = connection_string
        self._client: Any = None

    def _new_client(self) -> Any:
        """A container client, after checking the container exists."""
        blob = import_client("azure.storage.blob", "AzureFileSource", "azure")
        errors = import_client("azure.core.exceptions", "AzureFileSource", "azure")
        what = f'the Azure container "{self._container}"'
        try:
            client = blob.ContainerClient.from_connection_string(
                conn_str=self._connection_string,
                container_name=self._container,
                connection_timeout=10,
                initial_backoff=1,
                increment_base=2,
                retry_total=3,
            )
            exists = client.exists(retry_total=1)  # fail fast on an unreachable endpoint
        except errors.ClientAuthenticationError as exc:
            raise SourceInputError(self.name, what, f"authentication failed: {exc.reason or exc}") from None
        except (errors.AzureError, ValueError) as exc:
            raise SourceInputError(self.name, what, str(exc).splitlines()[0]) from exc
        if not exists:
            client.close()
            raise MissingAzureContainer(self.name, what, "it does not exist")
        return client

    def setup(self) -> None:
        """Create the container client and check the container exists."""
        if self._client is None:
            self._client = self._new_client()

    def _file_label(self, filepath: Path) -> str:
        return f"{self._container}/{object_name(filepath)}"

    def get_file_list(self, filepath: Path) -> Iterable[Path]:
        """The names of the blobs under ``filepath`` in name order (or ``filepath`` itself when it
        is a blob's name)."""
        for name in self._client.list_blob_names(name_starts_with=object_name(filepath) or None):
            if is_under(name, filepath):
                yield Path(name)

    def read_file(self, filepath: Path) -> BinaryIO:
        return io.BytesIO(self._client.download_blob(object_name(filepath)).readall())

    def file_partition_counter(self) -> int:
        """The number of "folders" directly under ``filepath`` (checked with a client of its own:
        this runs in the application's process, before the source starts)."""
        client = self._new_client()
        try:
            prefix = folder_prefix(self._filepath)
            return sum(1 for item in client.walk_blobs(name_starts_with=prefix or None, delimiter="/") if item.name.endswith("/"))
        finally:
            client.close()
