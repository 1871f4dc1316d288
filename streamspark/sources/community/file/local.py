"""``LocalFileSource``: the records of files on the local filesystem.

>>> source = LocalFileSource("exports/readings", replay_speed=0)
>>> source.name, source.default_topic().name
('file_readings', 'file_readings')
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import BinaryIO, Iterable

from .base import FileSource

__all__ = ("LocalFileSource",)


class LocalFileSource(FileSource):
    """Produce the records of the files under a local folder (or of one file).

    Files are walked recursively in name order; each is read whole into memory (the next
    one while the current one is produced). The parameters are :class:`FileSource`'s.
    """

    def get_file_list(self, filepath: Path) -> Iterable[Path]:
        if filepath.is_dir():
            for child in sorted(filepath.iterdir()):
                yield from self.get_file_list(child)
        else:
            yield filepath

    def read_file(self, filepath: Path) -> BinaryIO:
        return io.BytesIO(filepath.read_bytes())

    def file_partition_counter(self) -> int:
        """The number of folders directly under ``filepath``."""
        return sum(1 for child in self._filepath.iterdir() if child.is_dir())
