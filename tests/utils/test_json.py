"""streamspark.utils.json: orjson-backed dumps/loads with the reference's parameter names."""

from __future__ import annotations

import pytest

from streamspark.models.serializers import JSONDeserializer
from streamspark.utils.json import dumps, loads


@pytest.mark.parametrize(
    "value", [b'{"a":[1,2.5,null]}', bytearray(b'{"a":[1,2.5,null]}'), '{"a":[1,2.5,null]}', memoryview(b'{"a":[1,2.5,null]}')]
)
def test_loads_takes_bytes_and_text(value):
    assert loads(value) == {"a": [1, 2.5, None]}


def test_loads_takes_value_by_keyword():
    assert loads(value=b"[1]") == [1]


def test_loads_refuses_invalid_json_with_a_value_error():
    with pytest.raises(ValueError):
        loads(b"{nope")


def test_dumps_round_trips_through_loads():
    assert loads(dumps({"a": 1, 2: "b"})) == {"a": 1, "2": "b"}


def test_the_json_deserializer_still_parses_by_default():
    assert JSONDeserializer()(b'{"x":1}', None) == {"x": 1}
