"""Fast JSON helpers backed by orjson.

>>> dumps({"a": 1})
b'{"a":1}'
>>> loads(b'{"a":1}')
{'a': 1}
"""

from __future__ import annotations

from typing import Any, Union

import orjson

__all__ = ("DUMPS_OPTIONS", "dumps", "loads")

#: orjson options of :func:`dumps`: datetimes and dataclasses are not turned into JSON
DUMPS_OPTIONS = orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_DATACLASS


def dumps(value: Any) -> bytes:
    """Serialize ``value`` to compact JSON bytes: ``JSONSerializer``'s default ``dumps``.

    :raises TypeError: ``value`` holds what JSON cannot express: a dict key that is not a
        string, a datetime, a dataclass, a set...

    >>> dumps({"a": [1, None]})
    b'{"a":[1,null]}'
    """
    return orjson.dumps(value, option=DUMPS_OPTIONS)


def loads(value: Union[bytes, bytearray, memoryview, str]) -> Any:
    """Deserialize JSON bytes or text.

    :raises orjson.JSONDecodeError: (a ``ValueError``) ``value`` is not valid JSON.

    >>> loads('[1, "a"]')
    [1, 'a']
    """
    return orjson.loads(value)
