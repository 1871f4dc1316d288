"""``PandasDataFrameSource``: each row of a ``pandas.DataFrame`` becomes one JSON message.

>>> import pandas as pd
>>> df = pd.DataFrame({"id": ["a", "b"], "ts": [1, 2], "temp": [20.5, 21.0]})
>>> PandasDataFrameSource(df, key_column="id", timestamp_column="ts").name
'pandas-dataframe-source'
"""

from __future__ import annotations

import logging
import math
import time
from typing import Any, Optional

import pandas as pd

from ...models.serializers import SerializationError
from ...models.topics import Topic
from ..base.exceptions import SourceInputError
from ..base.source import Source, string_keyed_json_topic

__all__ = ("PandasDataFrameSource",)

logger = logging.getLogger(__name__)

_CHUNK_ROWS = 10_000


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


class PandasDataFrameSource(Source):
    """Produce a DataFrame's rows in order, each as a JSON object ``{column: value}``.

    Values keep their column's type (ints stay ints: rows are read with
    ``DataFrame.to_dict("records")``, which gives Python values); NaN becomes ``null``. A value
    JSON cannot hold (e.g. a ``Timestamp``) stops the source with :class:`SourceInputError`
    naming the row.

    :param df: the DataFrame.
    :param key_column: the column of the message keys (strings or nulls).
    :param timestamp_column: a column of integer timestamps in milliseconds (default: the time
        of producing).
    :param delay: seconds to sleep after each row (to simulate a stream).
    :param shutdown_timeout: seconds the application waits for the source to stop.
    :param keep_meta_as_values: keep the key and timestamp columns in the values too.
    :param name: the source's unique name (its default topic is ``source__<name>``).
    :raises ValueError: a column is missing, the key column holds something else than strings
        and nulls, or the timestamp column is not of an integer dtype.
    """

    def __init__(
        self,
        df: pd.DataFrame,
        key_column: str,
        timestamp_column: Optional[str] = None,
        delay: float = 0,
        shutdown_timeout: float = 10,
        keep_meta_as_values: bool = True,
        name: str = "pandas-dataframe-source",
    ) -> None:
        super().__init__(name=name, shutdown_timeout=shutdown_timeout)
        self._df = df
        self._delay = delay
        self._keep_meta_as_values = keep_meta_as_values
        self._key_col = self._check_key_column(key_column)
        self._timestamp_col = self._check_timestamp_column(timestamp_column) if timestamp_column else None

    def _check_key_column(self, name: str) -> str:
        column = self._df.get(name)
        if column is None:
            raise ValueError(f'Key column "{name}" does not exist in the DataFrame')
        # strings and nulls (the documented contract: pandas alone calls ["a", None] not a string column)
        if not (column.isnull().all() or pd.api.types.is_string_dtype(column.dropna())):
            raise ValueError(f'Key column "{name}" must be of a "string" dtype')
        return name

    def _check_timestamp_column(self, name: str) -> str:
        column = self._df.get(name)
        if column is None:
            raise ValueError(f'Timestamp column "{name}" does not exist in the DataFrame')
        if not pd.api.types.is_integer_dtype(column):
            raise ValueError(f'Timestamp column "{name}" must be of "integer" dtype')
        return name

    def run(self) -> None:
        """Produce the DataFrame's rows, one message each."""
        df = self._df
        logger.info('Source "%s" producing a DataFrame of %d rows', self.name, len(df))
        for start in range(0, len(df), _CHUNK_ROWS):
            chunk = df.iloc[start : start + _CHUNK_ROWS]
            for index, row in zip(chunk.index, chunk.to_dict("records")):
                if not self.running:
                    return
                self._produce_row(index, row)
                if self._delay > 0:
                    time.sleep(self._delay)

    def _produce_row(self, index: Any, row: dict[str, Any]) -> None:
        key = row[self._key_col]
        if _missing(key):
            key = None
        timestamp = row[self._timestamp_col] if self._timestamp_col else None
        if not self._keep_meta_as_values:
            row.pop(self._key_col, None)
            if self._timestamp_col:
                row.pop(self._timestamp_col, None)
        try:
            msg = self.serialize(key=key, value=row, timestamp_ms=timestamp)
        except SerializationError as exc:
            raise SourceInputError(self.name, f"row {index!r} of the DataFrame", str(exc)) from exc
        self.produce(key=msg.key, value=msg.value, timestamp=msg.timestamp)

    def default_topic(self) -> Topic:
        """``<name>`` with string keys and JSON values."""
        return string_keyed_json_topic(self.name)
