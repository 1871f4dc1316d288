"""The base exception of streamspark and the errors every layer shares.

>>> from streamspark.exceptions.base import QuixException, StreamsparkException
>>> QuixException is StreamsparkException
True
"""

from __future__ import annotations

__all__ = (
    "StreamsparkException",
    "QuixException",
    "BrokerUnreachableError",
    "ProcessingError",
    "InvalidTopology",
)


class StreamsparkException(Exception):
    """Base class of every error raised by streamspark itself."""


#: Alias kept for code written against the reference library.
QuixException = StreamsparkException


class BrokerUnreachableError(StreamsparkException):
    """The Kafka broker did not answer within ``request_timeout``."""


class InvalidTopology(StreamsparkException):
    """The dataframe graph cannot be compiled (e.g. it has no root or several)."""


class ProcessingError(StreamsparkException):
    """A record failed inside a pipeline running on Spark.

    The message names the topic, partition and offset of the record, and the original
    exception is chained as ``__cause__`` when it could be transported from the worker.
    """

    def __init__(
        self,
        message: str,
        *,
        topic: str | None = None,
        partition: int | None = None,
        offset: int | None = None,
        stage: str = "processing",
    ) -> None:
        super().__init__(message)
        self.topic = topic
        self.partition = partition
        self.offset = offset
        self.stage = stage


# Shown (tracebacks, reprs) and pickled under the package path the documentation uses.
for _cls in (StreamsparkException, BrokerUnreachableError, InvalidTopology, ProcessingError):
    _cls.__module__ = "streamspark.exceptions"
del _cls
