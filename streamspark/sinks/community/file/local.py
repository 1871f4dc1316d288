"""``LocalFileSink``: :class:`~.sink.FileSink` writing to the local file system.

>>> import os, tempfile
>>> root = os.path.relpath(tempfile.mkdtemp())
>>> sink = LocalFileSink(directory=root)
>>> sink.setup(); sink.add({"a": 1}, b"k", 5, None, "readings", 0, 42); sink.flush()
>>> os.listdir(os.path.join(root, "readings", "0"))
['0000000000000000042.jsonl']
"""

from __future__ import annotations

from typing import Union

from .destinations import LocalDestination
from .formats import Format, FormatName
from .sink import FileSink

__all__ = ("LocalFileSink",)


class LocalFileSink(FileSink):
    """Write batches as files under a local directory.

    :param append: add to an existing file instead of replacing it (JSON only); at-least-once.
        Default ``False``.
    :param directory: the base directory. Default: the working directory.
    :param format: ``"json"``, ``"parquet"`` or a :class:`~.formats.Format`. Default ``"json"``.
    """

    def __init__(self, append: bool = False, directory: str = "", format: Union[FormatName, Format] = "json") -> None:
        super().__init__(directory=directory, format=format, destination=LocalDestination(append=append))
