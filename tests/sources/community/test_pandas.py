"""PandasDataFrameSource: rows to JSON messages on the real broker; column checks; bad values."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from streamspark.sources import SourceInputError
from streamspark.sources.community.pandas import PandasDataFrameSource

from ..conftest import run_in_process


def frame() -> pd.DataFrame:
    return pd.DataFrame({"id": ["a", "b", "a"], "ts": [1000, 2000, 3000], "count": [1, 2, 3], "temp": [20.5, 21.0, 22.5]})


def test_rows_become_json_messages_with_key_and_timestamp_columns(sources, kafka):
    source = PandasDataFrameSource(frame(), key_column="id", timestamp_column="ts", keep_meta_as_values=False)
    topic = kafka.new_topic()
    sources.wait(sources.start(source, source.default_topic().__clone__(name=topic)))
    msgs = kafka.consume(topic, expected=3)
    assert [(m.key(), m.timestamp()[1], json.loads(m.value())) for m in msgs] == [
        (b"a", 1000, {"count": 1, "temp": 20.5}),
        (b"b", 2000, {"count": 2, "temp": 21.0}),
        (b"a", 3000, {"count": 3, "temp": 22.5}),
    ]


# --- in process (no broker) ---------------------------------------------------------------------------


def test_by_default_key_and_timestamp_stay_in_the_values_and_ints_stay_ints():
    msgs = run_in_process(PandasDataFrameSource(frame(), key_column="id", timestamp_column="ts"))
    assert json.loads(msgs[0]["value"]) == {"id": "a", "ts": 1000, "count": 1, "temp": 20.5}
    assert isinstance(json.loads(msgs[0]["value"])["count"], int)
    assert [m["timestamp"] for m in msgs] == [1000, 2000, 3000]


def test_without_a_timestamp_column_the_time_of_producing_is_used_and_nan_is_null():
    df = pd.DataFrame({"id": ["a", None], "v": [1.5, float("nan")]})
    msgs = run_in_process(PandasDataFrameSource(df, key_column="id"))
    assert [(m["key"], m["timestamp"], json.loads(m["value"])) for m in msgs] == [
        (b"a", None, {"id": "a", "v": 1.5}),
        (None, None, {"id": None, "v": None}),
    ]


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"key_column": "missing"}, 'Key column "missing" does not exist'),
        ({"key_column": "count"}, 'Key column "count" must be of a "string" dtype'),
        ({"key_column": "id", "timestamp_column": "missing"}, 'Timestamp column "missing" does not exist'),
        ({"key_column": "id", "timestamp_column": "temp"}, 'Timestamp column "temp" must be of "integer" dtype'),
    ],
)
def test_columns_are_checked_when_the_source_is_created(kwargs, message):
    with pytest.raises(ValueError, match=message):
        PandasDataFrameSource(frame(), **kwargs)


def test_a_value_json_cannot_hold_names_the_row():
    df = pd.DataFrame(
        {"id": ["a", "b"], "when": [pd.Timestamp("2024-01-01"), pd.Timestamp("2024-01-02")]}, index=["first", "second"]
    )
    with pytest.raises(SourceInputError, match="Source \"df\" cannot read row 'first' of the DataFrame"):
        run_in_process(PandasDataFrameSource(df, key_column="id", name="df"))
