"""The interface of lookups: what ``StreamingDataFrame.join_lookup`` calls for each record.

A lookup enriches a record's value in place with data from outside the stream (a database,
a service). Its fields say what to fetch and where to put it.

>>> import dataclasses
>>> from streamspark.dataframe import StreamingDataFrame
>>> from streamspark.models import Topic
>>> @dataclasses.dataclass(frozen=True)
... class Constant(BaseField):
...     value: int
>>> class ConstantLookup(BaseLookup[Constant]):
...     def join(self, fields, on, value, key, timestamp, headers):
...         for name, field in fields.items():
...             value[name] = (on, field.value)
>>> sdf = StreamingDataFrame(Topic("t")).join_lookup(ConstantLookup(), {"c": Constant(7)}, on="id")
>>> sdf.test({"id": "a"})
[({'id': 'a', 'c': ('a', 7)}, b'key', 0, None)]
"""

from __future__ import annotations

import abc
import dataclasses
from typing import Any, Generic, Mapping, TypeVar

from ....models.types import HeadersMapping

__all__ = ("BaseLookup", "BaseField")

F = TypeVar("F", bound="BaseField")


class BaseLookup(abc.ABC, Generic[F]):
    """A lookup strategy: subclasses implement :meth:`join` to enrich a record's value.

    ``join_lookup`` calls ``join`` once per record, in ``sdf.test()`` and in Spark's Python
    workers. The lookup object travels to the workers pickled with the pipeline, so it must be
    picklable: open connections lazily (on the first ``join`` in a process), not in
    ``__init__``, and leave them out of the pickled state.

    Example::

        class MyLookup(BaseLookup[MyField]):
            def join(self, fields, on, value, key, timestamp, headers):
                for name, field in fields.items():
                    value[name] = fetch(field, on)
    """

    @abc.abstractmethod
    def join(
        self,
        fields: Mapping[str, F],
        on: str,
        value: dict[str, Any],
        key: Any,
        timestamp: int,
        headers: HeadersMapping,
    ) -> None:
        """Enrich ``value`` in place with the data of ``fields``.

        :param fields: the field names to set in ``value``, each with what to fetch.
        :param on: the target key to look up (see ``join_lookup``'s ``on``).
        :param value: the message value (a dict), updated in place.
        :param key: the message key.
        :param timestamp: the message timestamp in milliseconds.
        :param headers: the message headers.
        """


@dataclasses.dataclass(frozen=True)
class BaseField(abc.ABC):
    """What one field of a lookup join fetches; each lookup defines its own fields."""
