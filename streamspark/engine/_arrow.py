"""Arrow schemas as Spark DDL strings, so each schema is written once."""

from __future__ import annotations

import pyarrow as pa

__all__ = ("ddl",)

_NAMES = {
    pa.string(): "string",
    pa.binary(): "binary",
    pa.int32(): "int",
    pa.int64(): "long",
    pa.float64(): "double",
    pa.bool_(): "boolean",
}


def ddl(schema: pa.Schema) -> str:
    """``pa.schema([("a", pa.int64())])`` -> ``"a long"``.

    >>> ddl(pa.schema([("a", pa.int64()), ("b", pa.binary())]))
    'a long, b binary'
    """
    return ", ".join(f"{field.name} {_NAMES[field.type]}" for field in schema)
