"""Small helpers of the dataframe API.

>>> from datetime import timedelta
>>> ensure_milliseconds(timedelta(seconds=1.5)), ensure_milliseconds(250)
(1500, 250)
"""

from __future__ import annotations

from datetime import timedelta
from typing import Union

__all__ = ("ensure_milliseconds",)


def ensure_milliseconds(delta: Union[int, timedelta]) -> int:
    """Milliseconds from an int (returned as is) or a ``timedelta`` (rounded to the nearest ms).

    :raises TypeError: for anything else (``bool`` included).
    """
    if isinstance(delta, timedelta):
        return round(delta.total_seconds() * 1000)
    if isinstance(delta, int) and not isinstance(delta, bool):
        return delta
    raise TypeError(f'Timedelta must be either "int" representing milliseconds or "datetime.timedelta", got "{type(delta)}"')
