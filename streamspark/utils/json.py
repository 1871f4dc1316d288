"""Fast JSON helpers backed by orjson.

>>> dumps({"a": 1})
b'{"a":1}'
>>> loads(b'{"a":1}')
{'a': 1}
"""

from __future__ import annotations

from typing import Any, Union

import orjson

__all__ = ("dumps", "loads")

_OPTIONS = orjson.OPT_NON_STR_KEYS


def dumps(value: Any) -> bytes:
    """Serialize ``value`` to JSON bytes (non-string dict keys are stringified)."""
    return orjson.dumps(value, option=_OPTIONS)


def loads(value: Union[bytes, bytearray, memoryview, str]) -> Any:
    """Deserialize JSON bytes or text.

    :raises orjson.JSONDecodeError: (a ``ValueError``) ``value`` is not valid JSON.

    >>> loads('[1, "a"]')
    [1, 'a']
    """
    return orjson.loads(value)
