"""The ``Destination`` interface, and the shared part of the object-store destinations."""

from __future__ import annotations

import abc
import re
from typing import Any

from ....base.batch import SinkBatch
from ..formats import Format

__all__ = ("Destination", "ObjectStoreDestination")

_DIRECTORY = re.compile(r"^[A-Za-z0-9 ./_]*$")
_UNSAFE_IN_TOPIC = re.compile(r"[^A-Za-z0-9 ./_]")


def topic_folder(topic: str) -> str:
    """The folder name of ``topic``: each character other than letters, digits, spaces, ``.``,
    ``/`` and ``_`` becomes ``_`` (as the reference names its folders).

    >>> topic_folder("sensor-readings.v1")
    'sensor_readings.v1'
    """
    return _UNSAFE_IN_TOPIC.sub("_", topic)


class Destination(abc.ABC):
    """A place files of batches go to; ``path(batch)`` is ``<directory>/<topic>/<partition>/<offset><ext>``
    (in the topic's name, characters other than letters, digits, spaces, ``.``, ``/`` and ``_``
    become ``_``).

    >>> from streamspark.sinks.community.file.destinations import LocalDestination
    >>> d = LocalDestination(); d.set_directory("out/data")
    >>> d.set_directory("out/*")
    Traceback (most recent call last):
    ...
    ValueError: directory may contain only letters, digits, spaces, '.', '/' and '_': 'out/*'
    """

    def __init__(self) -> None:
        self._directory = ""
        self._extension = ""

    def setup(self) -> None:
        """Check the destination is usable (called in each worker before the first write)."""

    def set_directory(self, directory: str) -> None:
        """Set the base directory (letters, digits, spaces, ``.``, ``/`` and ``_`` only)."""
        if not _DIRECTORY.match(directory):
            raise ValueError(f"directory may contain only letters, digits, spaces, '.', '/' and '_': {directory!r}")
        self._directory = directory.rstrip("/")

    def set_extension(self, format: Format) -> None:
        """Take the file extension of ``format``."""
        self._extension = format.file_extension

    def _batch_dir(self, batch: SinkBatch) -> str:
        parts = [p for p in (self._directory, topic_folder(batch.topic), str(batch.partition)) if p]
        return "/".join(parts)

    def path(self, batch: SinkBatch) -> str:
        """Where ``batch`` goes: ``<directory>/<topic>/<partition>/<start offset, 19 digits><extension>``."""
        return f"{self._batch_dir(batch)}/{batch.start_offset:019d}{self._extension}"

    @abc.abstractmethod
    def write(self, data: bytes, batch: SinkBatch) -> None:
        """Store the serialized ``batch``."""


class ObjectStoreDestination(Destination):
    """Objects in a bucket or container of an fsspec filesystem (the base of S3 and Azure).

    Subclasses set the fsspec protocol, what the bucket is called in messages, and the
    errors for a missing bucket and for denied access.
    """

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
        """The fsspec filesystem (created on first use, in each worker)."""
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
