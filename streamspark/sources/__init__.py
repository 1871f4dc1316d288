"""Sources: Python code producing to a topic, run by the application in processes of their own.

A source produces into its topic (by default ``source__<name>``, created by the application);
the pipeline reads that topic like any other, so offsets, replays and the processing guarantee
work as for any input.

>>> from streamspark.sources import CSVSource, Source, StatefulSource
>>> source = CSVSource("readings.csv", name="readings")
"""

from .base import (
    BaseSource,
    CheckpointProducerTimeout,
    ClientConnectFailureCallback,
    ClientConnectSuccessCallback,
    Source,
    SourceException,
    SourceInputError,
    SourceManager,
    StatefulSource,
    multiprocessing,
)
from .core.csv import CSVSource
from .core.kafka import KafkaReplicatorSource, QuixEnvironmentSource

__all__ = (
    "BaseSource",
    "Source",
    "StatefulSource",
    "SourceException",
    "SourceInputError",
    "CheckpointProducerTimeout",
    "SourceManager",
    "ClientConnectSuccessCallback",
    "ClientConnectFailureCallback",
    "CSVSource",
    "KafkaReplicatorSource",
    "QuixEnvironmentSource",
    "multiprocessing",
)
