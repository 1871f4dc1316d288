"""The base exception of streamspark and the errors every layer shares.

>>> from streamspark.exceptions.base import QuixException, StreamsparkException
>>> QuixException is StreamsparkException
True
"""

from __future__ import annotations

import pickle
from typing import Any

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
    message: str, topic: str | None, partition: int | None, offset: int | None, stage: str, kind: type | None = None
) -> ProcessingError:
    both = _subclass_for(kind) if kind is not None else None
    if both is None:
        return ProcessingError(message, topic=topic, partition=partition, offset=offset, stage=stage)
    return _bare(both, message)


def _bare(both: type, message: str) -> ProcessingError:
    """An instance of a class made by :func:`_subclass_for`, without running the cause's
    class's constructor (its attributes are set by the caller)."""
    made: Any = both.__new__(both, message)
    BaseException.__init__(made, message)
    assert isinstance(made, ProcessingError)
    return made


def _processing_error_str(self: BaseException) -> str:
    return BaseException.__str__(self)  # the message as given (a KeyError would quote it)


def _processing_error_reduce(self: ProcessingError) -> tuple[object, ...]:
    # the class made for a cause's type is not importable: it is made again from the cause's
    # class (when that pickles by name; else a plain ProcessingError), with the same attributes
    kind: type | None = type(self).__bases__[1]  # (ProcessingError, kind)
    try:
        pickle.dumps(kind)
    except Exception:
        kind = None
    args = (str(self), self.topic, self.partition, self.offset, self.stage, kind)
    return (_rebuild_processing_error, args, dict(vars(self)))


#: the ProcessingError subclass made for each cause type (None: none can be made)
_ALSO: dict[type, type | None] = {}
#: exception types whose instances need their own constructor's fields (left out: the next
#: class of the cause's MRO is used, e.g. ValueError for a UnicodeDecodeError)
_OWN_FIELDS = (UnicodeError, SyntaxError, ImportError, StopIteration, SystemExit)


def _subclass_for(kind: type) -> type | None:
    if kind not in _ALSO:
        made: type | None = None
        if not issubclass(kind, _OWN_FIELDS):
            try:
                made = type(
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
                made = None
        _ALSO[kind] = made
    return _ALSO[kind]


def processing_error(
    message: str,
    cause: BaseException | None,
    *,
    topic: str | None = None,
    partition: int | None = None,
    offset: int | None = None,
    stage: str = "processing",
) -> ProcessingError:
    """A ``ProcessingError`` that is also an instance of ``cause``'s class, so that ``except
    ZeroDivisionError`` around ``app.run()`` catches a failure of the user's code as in Quix
    Streams (where the original exception leaves ``app.run()``). The cause's own attributes
    are copied; its constructor is not called. Where a class cannot be a second base (or
    needs fields of its own, as ``UnicodeDecodeError``), the next class of its MRO is used
    (``ValueError``); without a cause, a plain ``ProcessingError``.

    >>> err = processing_error("processing failed at offset=3: ZeroDivisionError", ZeroDivisionError(), offset=3)
    >>> isinstance(err, ProcessingError), isinstance(err, ZeroDivisionError), str(err), err.offset
    (True, True, 'processing failed at offset=3: ZeroDivisionError', 3)
    >>> class Coded(Exception):
    ...     def __init__(self, code):
    ...         super().__init__(f"code {code}")
    ...         self.code = code
    >>> err = processing_error("boom", Coded(7))
    >>> isinstance(err, Coded), err.code, str(err)
    (True, 7, 'boom')
    >>> import json
    >>> err = processing_error("bad", json.JSONDecodeError("Expecting value", "x", 0))
    >>> isinstance(err, json.JSONDecodeError), err.pos
    (True, 0)
    """
    plain = ProcessingError(message, topic=topic, partition=partition, offset=offset, stage=stage)
    if cause is None or not isinstance(cause, Exception) or isinstance(cause, StreamsparkException):
        return plain
    for kind in type(cause).__mro__:
        if kind is Exception or not issubclass(kind, Exception):
            break
        both = _subclass_for(kind)
        if both is None:
            continue
        try:
            made = _bare(both, message)
            if isinstance(cause, OSError):
                for name in ("errno", "strerror", "filename", "filename2"):
                    setattr(made, name, getattr(cause, name))
            made.__dict__.update(vars(cause))
            made.__dict__.update(vars(plain))  # topic, partition, offset, stage
        except Exception:  # a __new__ of the cause's class that wants other arguments
            continue
        return made
    return plain


# Shown (tracebacks, reprs) and pickled under the package path the documentation uses.
for _cls in (StreamsparkException, BrokerUnreachableError, InvalidTopology, ProcessingError):
    _cls.__module__ = "streamspark.exceptions"
del _cls
