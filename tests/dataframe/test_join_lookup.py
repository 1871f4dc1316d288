"""``StreamingDataFrame.join_lookup`` with a custom lookup: the target key, in-place enrichment, bad input."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from streamspark.dataframe import StreamingDataFrame
from streamspark.dataframe.joins.lookups import BaseField, BaseLookup
from streamspark.models import Topic


@dataclasses.dataclass(frozen=True)
class Attr(BaseField):
    name: str


class TableLookup(BaseLookup[Attr]):
    """Looks the target key up in a dict and records every call."""

    def __init__(self, table: dict[Any, dict[str, Any]]) -> None:
        self.table = table
        self.calls: list[tuple[Any, ...]] = []

    def join(self, fields, on, value, key, timestamp, headers):
        self.calls.append((on, key, timestamp, headers))
        for name, field in fields.items():
            value[name] = self.table.get(on, {}).get(field.name)


TABLE = {"d1": {"model": "m1"}, b"d2": {"model": "m2"}, "D3": {"model": "m3"}}


@pytest.mark.parametrize(
    "on, value, key, expected_model",
    [
        pytest.param(None, {"x": 1}, b"d2", "m2", id="message key"),
        pytest.param(None, {"x": 1}, None, None, id="None key: no match"),
        pytest.param("device", {"device": "d1"}, b"k", "m1", id="column"),
        pytest.param("device", {"device": "nope"}, b"k", None, id="column: no match"),
        pytest.param(lambda v, k: v["device"].upper(), {"device": "d3"}, b"k", "m3", id="callable(value, key)"),
        pytest.param(lambda v, k: k.decode(), {}, b"d1", "m1", id="callable using the key"),
    ],
)
def test_target_key(on, value, key, expected_model):
    lookup = TableLookup(TABLE)
    sdf = StreamingDataFrame(Topic("t")).join_lookup(lookup, {"model": Attr("model")}, on=on)
    assert sdf.test(value, key=key, timestamp=7, headers=[("h", b"1")]) == [
        ({**value, "model": expected_model}, key, 7, [("h", b"1")])
    ]
    assert [call[1:] for call in lookup.calls] == [(key, 7, [("h", b"1")])]


def test_enriches_in_place_and_returns_the_same_dataframe():
    sdf = StreamingDataFrame(Topic("t"))
    assert sdf.join_lookup(TableLookup(TABLE), {"model": Attr("model")}, on="device") is sdf
    sdf["upper"] = sdf["model"].apply(str.upper)
    assert sdf.test({"device": "d1"}) == [({"device": "d1", "model": "m1", "upper": "M1"}, b"key", 0, None)]


def test_branches_before_the_lookup_do_not_see_its_fields():
    sdf = StreamingDataFrame(Topic("t"))
    sdf.apply(dict)  # a branch taken before the lookup
    sdf.join_lookup(TableLookup(TABLE), {"model": Attr("model")}, on="device")
    assert sorted(sdf.test({"device": "d1"}), key=lambda r: len(r[0])) == [
        ({"device": "d1"}, b"key", 0, None),
        ({"device": "d1", "model": "m1"}, b"key", 0, None),
    ]


def test_a_missing_on_column_is_a_processing_error():
    sdf = StreamingDataFrame(Topic("t")).join_lookup(TableLookup(TABLE), {"model": Attr("model")}, on="device")
    with pytest.raises(KeyError, match="device"):
        sdf.test({"other": 1})


@pytest.mark.parametrize(
    "lookup, fields, on, error",
    [
        pytest.param(object(), {"m": Attr("m")}, None, "expects a BaseLookup instance, got object", id="not a lookup"),
        pytest.param(TableLookup(TABLE), [("m", Attr("m"))], None, "fields as a dict", id="fields not a dict"),
        pytest.param(TableLookup(TABLE), {"m": "model"}, None, "field 'm' is a str, not a BaseField", id="bad field"),
        pytest.param(TableLookup(TABLE), {"m": Attr("m")}, 3, "'on' must be None, a column name or a callable", id="bad on"),
    ],
)
def test_bad_input_is_refused_when_building(lookup, fields, on, error):
    with pytest.raises(TypeError, match=error):
        StreamingDataFrame(Topic("t")).join_lookup(lookup, fields, on=on)
