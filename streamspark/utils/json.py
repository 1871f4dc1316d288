"""Fast JSON helpers backed by orjson.

>>> dumps({"a": 1})
b'{"a":1}'
>>> loads(b'{"a":1}')
{'a': 1}
"""

from __future__ import annotations

from typing import Any

import orjson

__all__ = ("dumps", "loads")

_OPTIONS = orjson.OPT_NON_STR_KEYS


def dumps(value: Any) -> bytes:
    """Serialize ``value`` to JSON bytes (non-string dict keys are stringified)."""
    return orjson.dumps(value, option=_OPTIONS)


#: Deserialize JSON bytes or text (orjson's own function: no wrapper frame on the per-message path).
loads = orjson.loads
