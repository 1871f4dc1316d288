"""Built-in sinks."""

from .csv import CSVSink
from .influxdb3 import InfluxDB3Sink
from .list import ListSink

__all__ = ("CSVSink", "InfluxDB3Sink", "ListSink")
