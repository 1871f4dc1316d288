"""Built-in sinks."""

from .csv import CSVSink
from .list import ListSink

__all__ = ("CSVSink", "ListSink")
