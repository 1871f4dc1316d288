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
    assert loads(dumps({"a": 1, "b": [2.5, None]})) == {"a": 1, "b": [2.5, None]}


@pytest.mark.parametrize("value", [{2: "b"}, {"at": __import__("datetime").datetime(2024, 1, 2)}, {1, 2}])
def test_dumps_refuses_what_the_default_json_serializer_refuses(value):
    from streamspark.models.serializers import JSONSerializer, SerializationError

    with pytest.raises(TypeError):
        dumps(value)
    with pytest.raises(SerializationError):
        JSONSerializer()(value, None)


def test_the_json_deserializer_still_parses_by_default():
    assert JSONDeserializer()(b'{"x":1}', None) == {"x": 1}
