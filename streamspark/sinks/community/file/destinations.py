"""Where ``FileSink`` writes: the local filesystem, S3 (and S3-compatible stores) or Azure Blob.

>>> d = LocalDestination(); d.set_directory("out/data"); d.set_extension(JSONFormat())
"""

from __future__ import annotations

import abc
import os
import re
from typing import Any, Optional

from ...base.batch import SinkBatch
from .formats import Format, JSONFormat

__all__ = ("Destination", "LocalDestination", "S3Destination", "AzureFileDestination",
           "S3BucketNotFoundError", "S3BucketAccessDeniedError",
           "AzureContainerNotFoundError", "AzureContainerAccessDeniedError")

_DIRECTORY = re.compile(r"^[A-Za-z0-9 ./_]*$")


class S3BucketNotFoundError(Exception):
    """The S3 bucket does not exist."""


class S3BucketAccessDeniedError(Exception):
    """The S3 bucket exists but these credentials may not use it."""


class AzureContainerNotFoundError(Exception):
    """The Azure container does not exist."""


class AzureContainerAccessDeniedError(Exception):
    """The Azure container exists but these credentials may not use it."""


class Destination(abc.ABC):
    """A place files of batches go to; ``path(batch)`` is ``<directory>/<topic>/<partition>/<offset><ext>``."""

    def __init__(self) -> None:
        self._directory = ""
        self._extension = ""

    def setup(self) -> None:
        """Check the destination is usable (called in each worker before the first write)."""

    def set_directory(self, directory: str) -> None:
        if not _DIRECTORY.match(directory):
            raise ValueError(f"directory may contain only letters, digits, spaces, '.', '/' and '_': {directory!r}")
        self._directory = directory.rstrip("/")

    def set_extension(self, format: Format) -> None:
        self._extension = format.file_extension

    def _batch_dir(self, batch: SinkBatch) -> str:
        parts = [p for p in (self._directory, batch.topic, str(batch.partition)) if p]
        return "/".join(parts)

    def path(self, batch: SinkBatch) -> str:
        return f"{self._batch_dir(batch)}/{batch.start_offset:019d}{self._extension}"

    @abc.abstractmethod
    def write(self, data: bytes, batch: SinkBatch) -> None:
        """Store the serialized ``batch``."""


class LocalDestination(Destination):
    """Files on the local disk (relative directories resolve against the working directory).

    :param append: append each batch to the partition's latest file instead of a new file.
    """

    def __init__(self, append: bool = False) -> None:
        super().__init__()
        self.append = append

    def set_directory(self, directory: str) -> None:
        # resolved where the sink is created: Spark workers may run in another directory
        super().set_directory(directory)
        self._directory = os.path.abspath(self._directory or ".")

    def write(self, data: bytes, batch: SinkBatch) -> None:
        directory = self._batch_dir(batch)
        os.makedirs(directory, exist_ok=True)
        if self.append:
            existing = sorted(f for f in os.listdir(directory) if f.endswith(self._extension))
            if existing:
                with open(os.path.join(directory, existing[-1]), "ab") as f:
                    f.write(data)
                return
        path = self.path(batch)
        tmp = f"{path}.tmp"
        with open(tmp, "wb") as f:
            f.write(data)
        os.replace(tmp, path)  # a replayed batch overwrites its own file


class _ObjectStore(Destination):
    _scheme = ""
    _what = "bucket"
    _not_found: type[Exception] = FileNotFoundError
    _denied: type[Exception] = PermissionError

    def __init__(self, bucket: str, storage_options: dict[str, Any]) -> None:
        super().__init__()
        self.bucket = bucket
        self._options = storage_options
        self._fs: Any = None

    @property
    def fs(self) -> Any:
        if self._fs is None:
            import fsspec

            self._fs = fsspec.filesystem(self._scheme, **self._options)
        return self._fs

    def setup(self) -> None:
        try:
            self.fs.ls(self.bucket, refresh=True)
        except FileNotFoundError as exc:
            raise self._not_found(f"{self._what} {self.bucket!r} does not exist") from exc
        except PermissionError as exc:
            raise self._denied(f"Access to {self._what} {self.bucket!r} was denied") from exc

    def write(self, data: bytes, batch: SinkBatch) -> None:
        self.fs.pipe_file(f"{self.bucket}/{self.path(batch)}", data)

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state["_fs"] = None
        return state


class S3Destination(_ObjectStore):
    """Objects in an S3 bucket (or an S3-compatible store).

    Credentials default to the usual environment: ``AWS_ACCESS_KEY_ID``, ``AWS_SECRET_ACCESS_KEY``,
    ``AWS_SESSION_TOKEN``, ``AWS_REGION``/``AWS_DEFAULT_REGION`` and ``AWS_ENDPOINT_URL_S3``.
    """

    _scheme = "s3"
    _what = "S3 bucket"
    _not_found = S3BucketNotFoundError
    _denied = S3BucketAccessDeniedError

    def __init__(self, bucket: str, aws_access_key_id: Optional[str] = None, aws_secret_access_key: Optional[str] = None,
                 region_name: Optional[str] = None, endpoint_url: Optional[str] = None, **kwargs: Any) -> None:
        env = os.environ
        client: dict[str, Any] = {}
        region = region_name or env.get("AWS_REGION") or env.get("AWS_DEFAULT_REGION")
        endpoint = endpoint_url or env.get("AWS_ENDPOINT_URL_S3") or env.get("AWS_ENDPOINT_URL")
        if region:
            client["region_name"] = region
        if endpoint:
            client["endpoint_url"] = endpoint
        options: dict[str, Any] = {"client_kwargs": client, "skip_instance_cache": True, **kwargs}
        key = aws_access_key_id or env.get("AWS_ACCESS_KEY_ID")
        if key:
            options["key"] = key
            options["secret"] = aws_secret_access_key or env.get("AWS_SECRET_ACCESS_KEY")
        super().__init__(bucket, options)



class AzureFileDestination(_ObjectStore):
    """Blobs in an Azure Storage container."""

    _scheme = "abfs"
    _what = "Azure container"
    _not_found = AzureContainerNotFoundError
    _denied = AzureContainerAccessDeniedError

    def __init__(self, connection_string: str, container: str) -> None:
        super().__init__(container, {"connection_string": connection_string})

