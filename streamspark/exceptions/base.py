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
    "processing_error",
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
    exception is chained as ``__cause__`` when it could be transported from the worker. Raised
    by ``app.run()``, it is also an instance of that exception's class where Python allows it
    (``except ZeroDivisionError`` catches it, as in Quix Streams).
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


def _rebuild_processing_error(
    message: str, topic: str | None, partition: int | None, offset: int | None, stage: str
) -> ProcessingError:
    return ProcessingError(message, topic=topic, partition=partition, offset=offset, stage=stage)


def _processing_error_str(self: BaseException) -> str:
    return BaseException.__str__(self)  # the message as given (a KeyError would quote it)


def _processing_error_reduce(self: ProcessingError) -> tuple[object, ...]:
    # the class made for a cause's type is not importable: pickled as a plain ProcessingError
    return (_rebuild_processing_error, (str(self), self.topic, self.partition, self.offset, self.stage))


_ALSO: dict[type, type] = {}


def processing_error(
    message: str,
    cause: BaseException | None,
    *,
    topic: str | None = None,
    partition: int | None = None,
    offset: int | None = None,
    stage: str = "processing",
) -> ProcessingError:
    """A ``ProcessingError`` that is also an instance of ``cause``'s class where Python allows
    it, so that ``except ZeroDivisionError`` catches a failure of the user's code as it does in
    Quix Streams (where the original exception leaves ``app.run()``); a plain
    ``ProcessingError`` otherwise (no cause, a cause type that cannot be a second base, or one
    whose constructor refuses a message).

    >>> err = processing_error("processing failed at offset=3: ZeroDivisionError", ZeroDivisionError(), offset=3)
    >>> isinstance(err, ProcessingError), isinstance(err, ZeroDivisionError), str(err), err.offset
    (True, True, 'processing failed at offset=3: ZeroDivisionError', 3)
    >>> class Pair(Exception):
    ...     def __init__(self, a, b):
    ...         super().__init__(a, b)
    >>> type(processing_error("boom", Pair(1, 2))) is ProcessingError  # it wants two arguments
    True
    """

    def plain() -> ProcessingError:
        return ProcessingError(message, topic=topic, partition=partition, offset=offset, stage=stage)

    kind = type(cause) if cause is not None else None
    if kind is None or not issubclass(kind, Exception) or issubclass(kind, StreamsparkException):
        return plain()
    both = _ALSO.get(kind)
    if both is None:
        try:
            both = type(
                "ProcessingError",
                (ProcessingError, kind),
                {
                    "__module__": "streamspark.exceptions",
                    "__qualname__": "ProcessingError",
                    "__str__": _processing_error_str,
                    "__reduce__": _processing_error_reduce,
                    "__doc__": ProcessingError.__doc__,
                },
            )
        except TypeError:  # a class whose instances are laid out apart from ProcessingError's
            both = ProcessingError
        _ALSO[kind] = both
    try:
        made = both(message, topic=topic, partition=partition, offset=offset, stage=stage)
    except Exception:  # the cause's class wants other constructor arguments
        return plain()
    assert isinstance(made, ProcessingError)
    return made


# Shown (tracebacks, reprs) and pickled under the package path the documentation uses.
for _cls in (StreamsparkException, BrokerUnreachableError, InvalidTopology, ProcessingError):
    _cls.__module__ = "streamspark.exceptions"
del _cls
