"""Building blocks of file sources: fetching files ahead, choosing the deserializer."""

from .file_deserializer import raw_filestream_deserializer
from .file_fetcher import FileFetcher

__all__ = ("FileFetcher", "raw_filestream_deserializer")
