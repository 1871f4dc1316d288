"""The ``Format`` interface: how one batch becomes the bytes of one file."""

from __future__ import annotations

import abc

from ....base.batch import SinkBatch

__all__ = ("Format",)


class Format(abc.ABC):
    """How a batch becomes the bytes of one file.

    >>> class CSVLines(Format):
    ...     file_extension = ".csv"
    ...     def serialize(self, batch):
    ...         return b"".join(f"{item.offset},{item.value}\\n".encode() for item in batch)
    >>> CSVLines().supports_append
    False
    """

    @property
    @abc.abstractmethod
    def file_extension(self) -> str:
        """The extension of the files, with its dot."""

    @property
    def supports_append(self) -> bool:
        """Whether a batch may be appended to an existing file."""
        return False

    @abc.abstractmethod
    def serialize(self, batch: SinkBatch) -> bytes:
        """The bytes of ``batch``."""
