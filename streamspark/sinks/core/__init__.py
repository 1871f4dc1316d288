"""Built-in sinks."""

from typing import Any

from .csv import CSVSink
from .list import ListSink

__all__ = ("CSVSink", "InfluxDB3Sink", "ListSink")


def __getattr__(name: str) -> Any:
    # imported on first use: its HTTP client (asyncio) would otherwise load in every Spark worker
    if name == "InfluxDB3Sink":
        from .influxdb3 import InfluxDB3Sink

        return InfluxDB3Sink
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
