"""The time-series data lake sink: Hive-partitioned Parquet registered in an Iceberg catalog.

>>> from streamspark.sinks.datalake import TSDataLakeSink, StreamTimeoutTracker, compact

``QuixTSDataLakeSink`` is the same class under the reference's name, for ported code.
"""

from .catalog import LakeCatalog, LakeCatalogError
from .compaction import compact
from .sink import TSDataLakeSink
from .storage import LakeStorage
from .timeout import StreamTimeoutTracker

QuixTSDataLakeSink = TSDataLakeSink

__all__ = (
    "TSDataLakeSink",
    "QuixTSDataLakeSink",
    "StreamTimeoutTracker",
    "LakeCatalog",
    "LakeCatalogError",
    "LakeStorage",
    "compact",
)
