"""File formats of ``FileSink``: JSON Lines (optionally gzip, appendable) and Parquet.

>>> resolve_format("parquet").file_extension
'.parquet'
>>> from streamspark.sinks.community.file.formats.json import JSONFormat
"""

from __future__ import annotations

from typing import Literal, Union, get_args

from .base import Format
from .json import JSONFormat
from .parquet import ParquetFormat

__all__ = ("Format", "FormatName", "JSONFormat", "ParquetFormat", "InvalidFormatError", "resolve_format")

FormatName = Literal["json", "parquet"]


class InvalidFormatError(Exception):
    """The format is neither a known name nor a ``Format`` instance."""


def resolve_format(format: Union[FormatName, Format]) -> Format:
    """A ``Format`` for a format name (a new instance) or the given instance itself.

    :raises InvalidFormatError: for any other value.
    """
    if isinstance(format, Format):
        return format
    if format == "json":
        return JSONFormat()
    if format == "parquet":
        return ParquetFormat()
    names = ", ".join(f'"{name}"' for name in get_args(FormatName))
    raise InvalidFormatError(f"format must be one of {names} or a Format instance, got {format!r}")
