"""``LocalDestination``: files on the local disk.

>>> d = LocalDestination(append=True)
"""

from __future__ import annotations

import os

from ....base.batch import SinkBatch
from ..formats import Format
from .base import Destination

__all__ = ("LocalDestination",)


class LocalDestination(Destination):
    """Files on the local disk (relative directories resolve against the working directory).

    :param append: append each batch to the partition's latest file instead of a new file
        (the format must support appending).
    """

    def __init__(self, append: bool = False) -> None:
        super().__init__()
        self.append = append

    def set_directory(self, directory: str) -> None:
        # resolved where the sink is created: Spark workers may run in another directory
        super().set_directory(directory)
        self._directory = os.path.abspath(self._directory or ".")

    def set_extension(self, format: Format) -> None:
        """Take the extension of ``format``; with ``append``, the format must support appending."""
        if self.append and not format.supports_append:
            raise ValueError(f"{type(format).__name__} does not support appending")
        super().set_extension(format)

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
