"""Access to the context of the message being processed.

>>> from streamspark import message_context
>>> def add_offset(value):  # inside a StreamingDataFrame callback
...     return {**value, "offset": message_context().offset}
"""

from __future__ import annotations

from contextvars import ContextVar, copy_context
from typing import Optional

from .exceptions import StreamsparkException
from .models.messagecontext import MessageContext

__all__ = ("message_context", "set_message_context", "copy_context", "MessageContextNotSetError")

#: the variable behind :func:`message_context`; the engine's per-record paths call its ``get``
#: and ``set`` directly (a function frame less per record). Not part of the public API.
current_message_context: ContextVar[Optional[MessageContext]] = ContextVar("message_context", default=None)


class MessageContextNotSetError(StreamsparkException):
    """``message_context()`` was called outside of message processing."""


def set_message_context(context: Optional[MessageContext]) -> None:
    """Set the current message context (advanced: the engine calls it per record)."""
    current_message_context.set(context)


def message_context() -> MessageContext:
    """Return the ``MessageContext`` of the message being processed.

    :raises MessageContextNotSetError: when called outside of a pipeline callback.
    """
    ctx = current_message_context.get()
    if ctx is None:
        raise MessageContextNotSetError("Message context is not set (called outside of processing?)")
    return ctx
