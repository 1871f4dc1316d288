"""Source base classes, the manager running sources in processes, and their errors."""

from .exceptions import CheckpointProducerTimeout, SourceException, SourceInputError
from .manager import SourceManager, SourceProcess
from .multiprocessing import multiprocessing
from .source import BaseSource, ClientConnectFailureCallback, ClientConnectSuccessCallback, Source, StatefulSource

__all__ = (
    "BaseSource",
    "Source",
    "StatefulSource",
    "SourceManager",
    "SourceProcess",
    "SourceException",
    "SourceInputError",
    "CheckpointProducerTimeout",
    "ClientConnectSuccessCallback",
    "ClientConnectFailureCallback",
    "multiprocessing",
)
