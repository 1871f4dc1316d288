"""Records → InfluxDB line protocol, with the reference's rules for tags, fields and time.

>>> conv = PointConverter(measurement="cpu", fields_keys=("load",), tags_keys=("host",))
>>> conv.line({"host": "a b", "load": 0.5, "n": 1}, key=b"k", timestamp=1700000000000, topic="t", partition=0)
'cpu,host=a\\\\ b load=0.5 1700000000000'
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any, Callable, Iterable, Literal, Optional, Union

__all__ = ("PointConverter", "decoded_key", "MeasurementSetter", "FieldsSetter", "TagsSetter", "TimeSetter", "TimePrecision")

TimePrecision = Literal["ms", "ns", "us", "s"]
MeasurementSetter = Union[str, Callable[[dict], str]]
FieldsSetter = Union[Iterable[str], Callable[[dict], Iterable[str]]]
TagsSetter = Union[Iterable[str], Callable[[dict], Iterable[str]]]
TimeSetter = Union[str, Callable[[dict], Any]]

_PER_SECOND = {"s": 1, "ms": 1_000, "us": 1_000_000, "ns": 1_000_000_000}
# an integer time "matches" a precision when it has this many digits (times after 2001-09-09)
_DIGITS = {"s": 10, "ms": 13, "us": 16, "ns": 19}


def _escape_key(text: str) -> str:
    return text.replace("\\", "\\\\").replace(",", "\\,").replace("=", "\\=").replace(" ", "\\ ").replace("\n", "\\n")


def _escape_measurement(text: str) -> str:
    return text.replace("\\", "\\\\").replace(",", "\\,").replace(" ", "\\ ").replace("\n", "\\n")


def _field_value(name: str, value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return f"{value}i"
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    raise ValueError(f'Type: "{type(value)}" of field: "{name}" is not supported (InfluxDB fields are str, float, int or bool)')


def decoded_key(key: Any) -> str:
    """A record key as the ``__key`` tag of ``InfluxDB1Sink``: bytes decoded as UTF-8 (as
    InfluxDB's v1 client writes them), anything else ``str()``."""
    return key.decode(errors="replace") if isinstance(key, bytes) else str(key)


class PointConverter:
    """Turns one record (a dict) into one line of line protocol (or None when it has no fields).

    - ``tags_keys`` are taken out of the value (a missing tag is left out) and stringified;
    - ``fields_keys`` empty means every remaining key; a missing field raises ``KeyError``
      unless ``allow_missing_fields``; None fields are left out;
    - time: ``time_setter`` (a key, or a callable returning the time or None), else the Kafka
      timestamp (milliseconds: with another ``time_precision`` it does not match and raises);
      an int must match ``time_precision`` (by its number of digits), a string is RFC 3339, a
      datetime is converted;
    - ``include_metadata_tags``: the key becomes the ``__key`` tag by ``key_tag``.
    """

    def __init__(
        self,
        measurement: MeasurementSetter,
        fields_keys: FieldsSetter = (),
        tags_keys: TagsSetter = (),
        time_setter: Optional[TimeSetter] = None,
        time_precision: TimePrecision = "ms",
        allow_missing_fields: bool = False,
        include_metadata_tags: bool = False,
        convert_ints_to_floats: bool = False,
        key_tag: Callable[[Any], str] = decoded_key,
    ) -> None:
        if time_precision not in _PER_SECOND:
            raise ValueError(f"time_precision must be one of {sorted(_PER_SECOND)}, got {time_precision!r}")
        if not callable(fields_keys) and not callable(tags_keys):
            overlap = set(fields_keys) & set(tags_keys)
            if overlap:
                raise ValueError(f"fields_keys and tags_keys overlap: {sorted(overlap)}")
        self.measurement = measurement
        self.fields_keys = fields_keys if callable(fields_keys) else tuple(fields_keys)
        self.tags_keys = tags_keys if callable(tags_keys) else tuple(tags_keys)
        self.time_setter = time_setter
        self.time_precision = time_precision
        self.allow_missing_fields = allow_missing_fields
        self.include_metadata_tags = include_metadata_tags
        self.convert_ints_to_floats = convert_ints_to_floats
        self.key_tag = key_tag

    def _time(self, value: dict, kafka_ms: int) -> int:
        setter = self.time_setter
        t: Any = None
        if callable(setter):
            t = setter(value)
        elif setter is not None:
            t = value.get(setter)
        default = t is None
        if default:
            t = kafka_ms  # an int of 13 digits: it matches only time_precision "ms"
        if isinstance(t, str):
            try:
                t = datetime.fromisoformat(t)
            except ValueError:
                raise ValueError(f"time {t!r} is not an RFC 3339 timestamp") from None
        if isinstance(t, datetime):
            if t.tzinfo is None:
                t = t.replace(tzinfo=timezone.utc)
            delta = t - datetime(1970, 1, 1, tzinfo=timezone.utc)
            micros = (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds
            return micros * _PER_SECOND[self.time_precision] // 1_000_000
        if isinstance(t, int) and not isinstance(t, bool):
            digits = len(str(t))
            expected = _DIGITS[self.time_precision]
            if digits != expected:
                raise ValueError(
                    f'`time_precision` of "{self.time_precision}" expects a {expected}-digit integer epoch, '
                    f"got {digits} (timestamp: {t})"
                    + ("; the default time is the Kafka timestamp, in milliseconds: set time_setter" if default else "")
                )
            return t
        raise TypeError(f"time must be an int, an RFC 3339 string or a datetime, got {type(t).__name__}")

    def line(self, value: Any, key: Any, timestamp: int, topic: str, partition: int) -> Optional[str]:
        if not isinstance(value, dict):
            raise TypeError(f"InfluxDB sinks accept dict values only, got {type(value).__name__}")
        value = dict(value)
        measurement = self.measurement(value) if callable(self.measurement) else self.measurement
        tags_keys = self.tags_keys(value) if callable(self.tags_keys) else self.tags_keys
        fields_keys = self.fields_keys(value) if callable(self.fields_keys) else self.fields_keys
        time = self._time(value, timestamp)
        tags: dict[str, str] = {}
        for k in tags_keys:
            if k in value:
                tag = value.pop(k)
                if tag is not None:
                    tags[k] = str(tag)
        if self.include_metadata_tags:
            if key is not None:  # a record without a key gets no __key tag
                tags["__key"] = self.key_tag(key)
            tags["__topic"] = topic
            tags["__partition"] = str(partition)
        if fields_keys:
            fields = {}
            for k in fields_keys:
                if k in value:
                    fields[k] = value[k]
                elif not self.allow_missing_fields:
                    raise KeyError(f"field {k!r} is missing from the record (allow_missing_fields=False)")
        else:
            fields = value
        parts = []
        for k, v in fields.items():
            if v is None:
                continue
            if self.convert_ints_to_floats and isinstance(v, int) and not isinstance(v, bool):
                v = float(v)
            parts.append(f"{_escape_key(str(k))}={_field_value(k, v)}")
        if not parts:
            return None
        head = _escape_measurement(str(measurement))
        for k in sorted(tags):
            if tags[k] != "":
                head += f",{_escape_key(k)}={_escape_key(tags[k])}"
        return f"{head} {','.join(parts)} {time}"
