"""File formats of file sources: ``"json"`` (JSON Lines) and ``"parquet"``.

>>> sorted(FORMATS)
['json', 'parquet']
"""

from __future__ import annotations

from .base import Format, FormatName
from .json import JSONFormat
from .parquet import ParquetFormat

__all__ = ("Format", "FormatName", "JSONFormat", "ParquetFormat", "FORMATS")

#: format name -> its class
FORMATS: dict[str, type[Format]] = {"json": JSONFormat, "parquet": ParquetFormat}
