"""The Quix message formats: Timeseries (``TimeseriesData``/``ParameterData``) and ``EventData``.

A Quix message names its model and codec in the headers ``__Q_ModelKey`` and ``__Q_CodecId``, or,
in the legacy format, inside the value: ``{"C": codec, "K": model, "V": value, "S": start,
"E": end}``. One Timeseries message holds many rows (one per timestamp), so
:class:`QuixDeserializer` has ``split_values = True``: each row becomes its own record.

>>> value = QuixTimeseriesSerializer(as_legacy=False)({"a": 1, "Timestamp": 5}, None)
>>> value
b'{"BinaryValues":{},"StringValues":{},"NumericValues":{"a":[1]},"Timestamps":[5],"TagValues":{}}'
>>> headers = [("__Q_ModelKey", b"TimeseriesData"), ("__Q_CodecId", b"JT")]
>>> list(QuixDeserializer()(value, SerializationContext("t", headers=headers)))
[{'a': 1, 'Tags': {}, 'Timestamp': 5}]
"""

from __future__ import annotations

import base64
import gzip
from typing import Any, Callable, Iterable, List, Mapping, Union

from .base import SerializationContext, context_free
from .exceptions import IgnoreMessage, SerializationError
from .json import JSONDeserializer, JSONSerializer, default_dumps, default_loads

__all__ = ("QuixDeserializer", "QuixSerializer", "QuixTimeseriesSerializer", "QuixEventsSerializer")

MODEL_KEY_HEADER = "__Q_ModelKey"
CODEC_ID_HEADER = "__Q_CodecId"
SPLIT_MESSAGE_ID_HEADER = "__Q_SplitMessageId"
#: the field of a row (and of an event) holding its timestamp, in nanoseconds
TIMESTAMP_KEY = "Timestamp"

TIMESERIES_DATA = "TimeseriesData"
PARAMETER_DATA = "ParameterData"
EVENT_DATA = "EventData"
EVENT_DATA_LIST = "EventData[]"
#: protocol messages without data: skipped
IGNORED_MODELS = frozenset({"StreamProperties", "StreamEnd", "ParameterDefinitions", "EventDefinitions"})
JSON_CODECS = frozenset({"J", "JT"})
GZIP_PREFIX = "[GZIP]"
_TIMESERIES_TYPES = ("NumericValues", "StringValues", "BinaryValues")


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, (bytes, bytearray)) else str(value)


class QuixDeserializer(JSONDeserializer):
    """Deserializes Quix Timeseries and EventData messages (JSON codecs), one row per record.

    :param loads: the function parsing JSON ``bytes`` (orjson by default).

    A Timeseries message gives one dict per timestamp: its parameters (binary values base64-decoded),
    ``"Tags"`` and ``"Timestamp"`` (ns). An event gives ``{"Timestamp", "Id", "Value", "Tags"}``.
    Protocol messages (stream properties, definitions, stream end) are skipped; other codecs,
    unknown models, split messages and missing headers raise :class:`SerializationError`.
    """

    def __init__(self, loads: Callable[[Union[bytes, bytearray]], Any] = default_loads) -> None:
        super().__init__(loads=loads)

    @property
    def split_values(self) -> bool:
        """Always True: a message may hold several rows, so ``__call__`` returns an iterable."""
        return True

    def deserialize(self, model_key: str, value: Union[List[Mapping], Mapping]) -> Iterable[Mapping]:
        """The rows of a parsed message of model ``model_key`` (the ``__Q_ModelKey`` header).

        >>> list(QuixDeserializer().deserialize("EventData", {"Timestamp": 1, "Id": "e", "Value": "v"}))
        [{'Timestamp': 1, 'Id': 'e', 'Value': 'v', 'Tags': {}}]
        """
        if model_key in (TIMESERIES_DATA, PARAMETER_DATA):
            return self._timeseries_rows(value)
        if model_key == EVENT_DATA:
            return [self._event_row(value)]
        if model_key == EVENT_DATA_LIST:
            if not isinstance(value, list):
                raise SerializationError(f"{EVENT_DATA_LIST} expects a list, got {type(value).__name__}")
            return [self._event_row(item) for item in value]
        raise SerializationError(f'Unsupported "{MODEL_KEY_HEADER}" value "{model_key}"')

    def __call__(self, value: bytes, ctx: SerializationContext) -> Iterable[Mapping]:  # type: ignore[override]
        """The rows of one message, lazily: nothing is parsed or checked (and neither
        :class:`IgnoreMessage` nor :class:`SerializationError` raised) until the result is
        iterated, as in the reference."""
        yield from self._rows(value, ctx)

    def _rows(self, value: bytes, ctx: SerializationContext) -> Iterable[Mapping]:
        if not isinstance(value, (bytes, bytearray)):
            raise SerializationError(f"Quix messages are bytes, got {type(value).__name__}")
        if value.startswith(b"<"):
            raise SerializationError("Split Quix messages are not supported")
        parsed: Any = None
        if value.startswith(b'{"C":') and b'"K":' in value:  # legacy: model and codec in the value
            legacy = self._parse(value)
            codec, model, parsed = legacy.get("C"), legacy.get("K"), legacy.get("V")
        else:
            given: Any = ctx.headers if ctx is not None else None
            headers = {name: _text(header) for name, header in given or ()}
            if SPLIT_MESSAGE_ID_HEADER in headers:
                raise SerializationError(f'"{SPLIT_MESSAGE_ID_HEADER}" header found: split messages are not supported')
            codec, model = headers.get(CODEC_ID_HEADER), headers.get(MODEL_KEY_HEADER)
        if not codec:
            raise SerializationError(f'"{CODEC_ID_HEADER}" header is missing or empty')
        if not model:
            raise SerializationError(f'"{MODEL_KEY_HEADER}" header is missing or empty')
        if model in IGNORED_MODELS:
            raise IgnoreMessage(f'Ignore Quix message with "{MODEL_KEY_HEADER}": "{model}" (it holds no data)')
        if codec.startswith(GZIP_PREFIX):
            codec = codec[len(GZIP_PREFIX) :]
            if parsed is None:
                value = gzip.decompress(value)
        if codec not in JSON_CODECS:
            raise SerializationError(f'Unsupported "{CODEC_ID_HEADER}" value "{codec}"')
        if parsed is None:
            parsed = self._parse(value)
        return self.deserialize(model, parsed)

    def _parse(self, value: bytes) -> Any:
        try:
            return self._loads(value)
        except (TypeError, ValueError) as exc:
            raise self.not_deserializable(exc) from exc

    def _timeseries_rows(self, value: Any) -> List[Mapping]:
        if not isinstance(value, Mapping):
            raise SerializationError(f'Expected mapping, got type "{type(value)}" (timeseries data)')
        try:
            timestamps = value["Timestamps"]
            columns = []
            for kind in _TIMESERIES_TYPES:
                for name, values in (value.get(kind) or {}).items():
                    if name == TIMESTAMP_KEY:
                        raise SerializationError(
                            f"The parameter {kind}.{name} competes with the rows' {TIMESTAMP_KEY!r} field; rename it"
                        )
                    columns.append((name, values, kind == "BinaryValues"))
            tags = list((value.get("TagValues") or {}).items())
            rows: List[Mapping] = []
            for i, timestamp in enumerate(timestamps):
                row: dict[str, Any] = {}
                for name, values, binary in columns:
                    item = values[i]
                    row[name] = base64.b64decode(item) if binary and item is not None else item
                row["Tags"] = {tag: values[i] for tag, values in tags}
                row[TIMESTAMP_KEY] = timestamp
                rows.append(row)
        except (KeyError, IndexError, TypeError, ValueError) as exc:
            raise SerializationError(f"Malformed Quix timeseries data: {exc!r}") from exc
        return rows

    @staticmethod
    def _event_row(value: Any) -> Mapping:
        if not isinstance(value, Mapping):
            raise SerializationError(f'Expected mapping, got type "{type(value)}" (event data)')
        try:
            return {
                TIMESTAMP_KEY: value[TIMESTAMP_KEY],
                "Id": value["Id"],
                "Value": value["Value"],
                "Tags": value.get("Tags", {}),
            }
        except KeyError as exc:
            raise SerializationError(f"Malformed Quix event data: missing {exc}") from exc


class QuixSerializer(JSONSerializer):
    """Base of the Quix serializers: JSON, in the legacy envelope or with the Quix headers.

    :param as_legacy: write the legacy format (model and codec inside the value, no headers).
        Default ``True``.
    :param dumps: the function turning a value into JSON ``bytes``/``str``.
    """

    #: the model key written by this serializer
    model_key: str = ""
    #: the legacy format's model key (``ParameterData`` for timeseries)
    legacy_model_key: str = ""

    def __init__(self, as_legacy: bool = True, dumps: Callable[[Any], Union[str, bytes]] = default_dumps) -> None:
        super().__init__(dumps=dumps)
        self._as_legacy = as_legacy

    @property
    def extra_headers(self) -> dict[str, Any]:
        """``__Q_ModelKey`` and ``__Q_CodecId``; none in the legacy format."""
        if self._as_legacy:
            return {}
        return {MODEL_KEY_HEADER: self.model_key, CODEC_ID_HEADER: "JT"}

    def _encode(self, value: Mapping[str, Any]) -> bytes:
        try:
            data = self._dumps(value)
        except (TypeError, ValueError) as exc:
            raise self.not_serializable(exc) from exc
        if not self._as_legacy:
            return data  # type: ignore[return-value]  # as ``dumps`` gave it (bytes or str)
        if isinstance(data, str):
            data = data.encode()
        head = f'{{"C":"JT","K":"{self.legacy_model_key}","V":'.encode()
        return head + data + f',"S":{len(head)},"E":{len(head) + len(data)}}}'.encode()

    @staticmethod
    def _timestamp(value: Mapping[str, Any]) -> Any:
        try:
            return value[TIMESTAMP_KEY]
        except KeyError:
            raise SerializationError(f"Missing required Quix field: {TIMESTAMP_KEY!r}") from None

    @staticmethod
    def _mapping(value: Any) -> Mapping[str, Any]:
        if not isinstance(value, Mapping):
            raise SerializationError(f"Expected Mapping, got {type(value)}")
        return value


@context_free
class QuixTimeseriesSerializer(QuixSerializer):
    """Serializes one row (a dict) to a Quix Timeseries message.

    Values must be ``int``/``float`` (``NumericValues``), ``str`` (``StringValues``) or
    ``bytes``/``bytearray`` (``BinaryValues``, base64); ``None`` values are left out; ``"Tags"``
    (a dict) becomes ``TagValues``; ``"Timestamp"`` (ns) is required unless there is no value.
    Anything else raises :class:`SerializationError`.

    >>> QuixTimeseriesSerializer()({"c": "x", "Timestamp": 1}, None)
    b'{"C":"JT","K":"ParameterData","V":{"BinaryValues":{},"StringValues":{"c":["x"]},"NumericValues":{},"Timestamps":[1],"TagValues":{}},"S":34,"E":131}'
    """

    model_key = TIMESERIES_DATA
    legacy_model_key = PARAMETER_DATA

    def __call__(self, value: Mapping, ctx: SerializationContext) -> bytes:  # type: ignore[override]
        value = self._mapping(value)
        binary: dict[str, list[str]] = {}
        strings: dict[str, list[str]] = {}
        numbers: dict[str, list[Any]] = {}
        tags: dict[str, list[Any]] = {}
        for name, item in value.items():
            if item is None or name == TIMESTAMP_KEY:
                continue
            if name == "Tags":
                if not isinstance(item, Mapping):
                    raise SerializationError(f'"Tags" must be a Mapping, got type "{type(item)}"')
                tags.update((tag, [tag_value]) for tag, tag_value in item.items())
            elif isinstance(item, (int, float)) and not isinstance(item, bool):
                numbers[name] = [item]
            elif isinstance(item, str):
                strings[name] = [item]
            elif isinstance(item, (bytes, bytearray)):
                binary[name] = [base64.b64encode(item).decode("ascii")]
            else:
                raise SerializationError(f'Item with key "{name}" has unsupported type "{type(item)}"')
        timestamps = [self._timestamp(value)] if binary or strings or numbers else []
        return self._encode(
            {
                "BinaryValues": binary,
                "StringValues": strings,
                "NumericValues": numbers,
                "Timestamps": timestamps,
                "TagValues": tags,
            }
        )


@context_free
class QuixEventsSerializer(QuixSerializer):
    """Serializes a dict to a Quix EventData message: ``"Id"`` (str, default ``""``),
    ``"Value"`` (str, default ``""``), ``"Tags"`` (dict, default ``{}``) and the required
    ``"Timestamp"`` (ns); other fields are left out.

    >>> QuixEventsSerializer(as_legacy=False)({"Id": "e", "Timestamp": 1, "other": 2}, None)
    b'{"Id":"e","Value":"","Tags":{},"Timestamp":1}'
    """

    model_key = EVENT_DATA
    legacy_model_key = EVENT_DATA

    def __call__(self, value: Mapping, ctx: SerializationContext) -> bytes:  # type: ignore[override]
        value = self._mapping(value)
        event_id, event_value, tags = value.get("Id", ""), value.get("Value", ""), value.get("Tags") or {}
        for name, item, kind in (("Value", event_value, str), ("Id", event_id, str), ("Tags", tags, dict)):
            if not isinstance(item, kind):
                raise SerializationError(f'Field "{name}" is expected to be of type "{kind.__name__}", got {type(item)}')
        return self._encode({"Id": event_id, "Value": event_value, "Tags": tags, TIMESTAMP_KEY: self._timestamp(value)})
