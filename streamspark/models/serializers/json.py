"""JSON serializers (orjson), with optional JSON-Schema validation (Draft 2020-12)."""

from __future__ import annotations

import functools
from typing import Any, Callable, Mapping, Optional

import orjson

from ...utils.json import dumps as _default_dumps
from ...utils.json import loads as _default_loads
from .base import Deserializer, SerializationContext, Serializer, context_free
from .exceptions import SerializationError

__all__ = ("JSONSerializer", "JSONDeserializer")


def _make_validator(schema: Optional[Mapping[str, Any]], validator: Any) -> Any:
    if validator is not None:
        return validator
    if schema is None:
        return None
    from jsonschema import Draft202012Validator

    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


@context_free
class JSONSerializer(Serializer):
    """Serializes values to JSON bytes.

    :param dumps: the function turning a value into ``bytes``/``str`` (orjson by default).
    :param schema: a JSON Schema every value must satisfy.
    :param validator: a ``jsonschema`` validator; overrides ``schema``.

    >>> JSONSerializer()({"a": 1}, None)
    b'{"a":1}'
    """

    def __init__(
        self,
        dumps: Callable[[Any], bytes | str] = _default_dumps,
        schema: Optional[Mapping[str, Any]] = None,
        validator: Any = None,
    ) -> None:
        self._dumps = dumps
        self._schema = schema
        self._validator = _make_validator(schema, validator)

    def __call__(self, value: Any, ctx: SerializationContext) -> bytes | str:
        if self._validator is not None:
            from jsonschema import ValidationError

            try:
                self._validator.validate(value)
            except ValidationError as exc:
                raise SerializationError(f"JSON schema validation failed: {exc.message}") from exc
        try:
            return self._dumps(value)
        except (TypeError, ValueError) as exc:
            raise self.not_serializable(exc) from exc

    @staticmethod
    def not_serializable(exc: Exception) -> SerializationError:
        """The error for a value that ``dumps`` refused (also raised by the engine's direct path)."""
        return SerializationError(f"Value is not JSON-serializable: {exc}")

    def _plain_dumps(self) -> Optional[Callable[[Any], bytes | str]]:
        """The bare ``dumps`` when this serializer does nothing else (no schema, ``__call__`` not
        overridden): the engine then calls it directly, once per output, and turns its
        ``TypeError``/``ValueError`` into :meth:`not_serializable`'s error. The default dumps is
        orjson's own function with its options bound (no wrapper frame)."""
        if type(self).__call__ is not JSONSerializer.__call__ or self._validator is not None:
            return None
        if self._dumps is _default_dumps:
            return functools.partial(orjson.dumps, option=orjson.OPT_NON_STR_KEYS)
        return self._dumps

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        if self._schema is not None:
            state["_validator"] = None
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        if self._validator is None and self._schema is not None:
            self._validator = _make_validator(self._schema, None)


@context_free
class JSONDeserializer(Deserializer):
    """Deserializes JSON bytes, optionally validating against a JSON Schema.

    >>> JSONDeserializer()(b'{"a": 1}', None)
    {'a': 1}
    """

    def __init__(
        self,
        loads: Callable[[bytes | str], Any] = _default_loads,
        schema: Optional[Mapping[str, Any]] = None,
        validator: Any = None,
    ) -> None:
        super().__init__()
        self._loads = loads
        self._schema = schema
        self._validator = _make_validator(schema, validator)

    def _plain_loads(self) -> Optional[Callable[[bytes | str], Any]]:
        """The bare ``loads`` when this deserializer does nothing else (no schema, ``__call__`` not
        overridden): the engine then calls it directly, once per message."""
        if type(self).__call__ is JSONDeserializer.__call__ and self._validator is None:
            return self._loads
        return None

    def __call__(self, value: bytes, ctx: SerializationContext) -> Any:
        data = self._loads(value)
        if self._validator is not None:
            from jsonschema import ValidationError

            try:
                self._validator.validate(data)
            except ValidationError as exc:
                raise SerializationError(f"JSON schema validation failed: {exc.message}") from exc
        return data

    __getstate__ = JSONSerializer.__getstate__
    __setstate__ = JSONSerializer.__setstate__
