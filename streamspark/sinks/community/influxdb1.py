"""``InfluxDB1Sink``: records as points through the InfluxDB 1.x HTTP write API.

Guarantee: at-least-once, and idempotent in effect: a replayed point has the same
measurement, tags and time, so InfluxDB overwrites it instead of adding a second one.

>>> sink = InfluxDB1Sink(host="http://localhost", database="metrics", measurement="cpu",
...                      tags_keys=["host"], fields_keys=["load"])
"""

from __future__ import annotations

import urllib.parse
from typing import Optional

from .._influx.points import FieldsSetter, MeasurementSetter, TagsSetter, TimePrecision, TimeSetter
from .._influx.sink import _InfluxSink
from ..base.sink import ClientConnectFailureCallback, ClientConnectSuccessCallback

__all__ = ("InfluxDB1Sink",)

_V1_PRECISION = {"ns": "n", "us": "u", "ms": "ms", "s": "s"}


class InfluxDB1Sink(_InfluxSink):
    """Write dict records to InfluxDB 1.x (the reference's parameters and rules).

    :param host: ``http(s)://host`` (``localhost`` alone means http).
    :param database: database name (it must exist).
    :param measurement: a name, or ``callable(value) -> str``.
    :param fields_keys: keys written as fields (or a callable); empty = the whole value.
    :param tags_keys: keys popped from the value and written as tags (or a callable).
    :param time_setter: a key or ``callable(value)`` giving the time; default: Kafka timestamp.
    :param time_precision: ``"ms" | "ns" | "us" | "s"``.
    :param allow_missing_fields: skip missing ``fields_keys`` instead of raising ``KeyError``.
    :param include_metadata_tags: add ``__key`` (unless the key is None), ``__topic`` and
        ``__partition`` tags.
    :param convert_ints_to_floats: write ints as floats.
    :param batch_size: points per HTTP request (not per flush).
    :param request_timeout_ms: HTTP timeout.

    HTTP 429 (or 503 with Retry-After) is backpressure: the batch is retried after the delay.
    """

    def __init__(
        self,
        host: str,
        database: str,
        measurement: MeasurementSetter,
        port: int = 8086,
        username: Optional[str] = None,
        password: Optional[str] = None,
        fields_keys: FieldsSetter = (),
        tags_keys: TagsSetter = (),
        time_setter: Optional[TimeSetter] = None,
        time_precision: TimePrecision = "ms",
        allow_missing_fields: bool = False,
        include_metadata_tags: bool = False,
        convert_ints_to_floats: bool = False,
        batch_size: int = 1000,
        request_timeout_ms: int = 10_000,
        on_client_connect_success: Optional[ClientConnectSuccessCallback] = None,
        on_client_connect_failure: Optional[ClientConnectFailureCallback] = None,
    ) -> None:
        super().__init__(
            measurement,
            fields_keys,
            tags_keys,
            time_setter,
            time_precision,
            allow_missing_fields,
            include_metadata_tags,
            convert_ints_to_floats,
            batch_size,
            request_timeout_ms,
            on_client_connect_success,
            on_client_connect_failure,
        )
        base = host if "://" in host else f"http://{host}"
        parsed = urllib.parse.urlsplit(base)
        self._base = f"{parsed.scheme}://{parsed.hostname}:{parsed.port or port}"
        self._database = database
        self._username = username
        self._password = password

    def _query(self) -> str:
        params = {"db": self._database, "precision": _V1_PRECISION[self._precision]}
        if self._username:
            params["u"] = self._username
            params["p"] = self._password or ""
        return urllib.parse.urlencode(params)

    def _write_url(self) -> str:
        return f"{self._base}/write?{self._query()}"

    def setup(self) -> None:
        status = self._ping(f"{self._base}/ping")
        if status not in (200, 204):
            raise ConnectionError(f"InfluxDB at {self._base} answered /ping with HTTP {status}")
