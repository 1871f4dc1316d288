"""``InfluxDB3Sink``: records as points through InfluxDB 3's write API (``/api/v2/write``).

Guarantee: at-least-once, idempotent in effect (a replayed point overwrites itself: same
measurement, tags and time).

>>> sink = InfluxDB3Sink(token="t", host="https://influx.example.com", organization_id="org",
...                      database="metrics", measurement="cpu", tags_keys=["host"])
"""

from __future__ import annotations

import urllib.parse
from typing import Optional

from .._influx.points import FieldsSetter, MeasurementSetter, TagsSetter, TimePrecision, TimeSetter
from .._influx.sink import _InfluxSink
from ..base.sink import ClientConnectFailureCallback, ClientConnectSuccessCallback

__all__ = ("InfluxDB3Sink",)


class InfluxDB3Sink(_InfluxSink):
    """Write dict records to InfluxDB 3 (Cloud / Clustered / Core); the reference's parameters.

    Same rules as :class:`~streamspark.sinks.community.influxdb1.InfluxDB1Sink` for
    measurement, tags (popped), fields, ``time_setter``/``time_precision``, missing fields and
    backpressure on HTTP 429; plus ``token`` (``Authorization: Token …``), ``organization_id``,
    and gzip-compressed writes (``enable_gzip``). ``debug`` logs each request.

    ``raise_on_retention_violation``: when InfluxDB refuses points for its retention policy
    (HTTP 422), ``False`` (the default) logs a warning and skips them; ``True`` fails the batch.
    ``verify_ssl=False`` accepts any HTTPS certificate (self-signed servers). Default ``True``.
    With ``include_metadata_tags`` a bytes key is written as its ``str()`` (``b'k1'``), as
    InfluxDB 3's Python client writes it.
    """

    _key_tag = staticmethod(str)

    def __init__(
        self,
        token: str,
        host: str,
        organization_id: str,
        database: str,
        measurement: MeasurementSetter,
        fields_keys: FieldsSetter = (),
        tags_keys: TagsSetter = (),
        time_setter: Optional[TimeSetter] = None,
        time_precision: TimePrecision = "ms",
        allow_missing_fields: bool = False,
        include_metadata_tags: bool = False,
        convert_ints_to_floats: bool = False,
        batch_size: int = 1000,
        enable_gzip: bool = True,
        request_timeout_ms: int = 10_000,
        debug: bool = False,
        on_client_connect_success: Optional[ClientConnectSuccessCallback] = None,
        on_client_connect_failure: Optional[ClientConnectFailureCallback] = None,
        *,
        raise_on_retention_violation: bool = False,
        verify_ssl: bool = True,
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
        self._base = (host if "://" in host else f"https://{host}").rstrip("/")
        self._token = token
        self._org = organization_id
        self._database = database
        self._gzip = enable_gzip
        self._debug = debug
        self._raise_on_retention_violation = raise_on_retention_violation
        self._verify_ssl = verify_ssl

    def _write_url(self) -> str:
        query = urllib.parse.urlencode({"bucket": self._database, "org": self._org, "precision": self._precision})
        return f"{self._base}/api/v2/write?{query}"

    def _headers(self) -> dict[str, str]:
        return {"Authorization": f"Token {self._token}"}

    def setup(self) -> None:
        status = self._ping(f"{self._base}/ping", self._headers())
        if status in (401, 403):
            raise PermissionError(f"InfluxDB at {self._base} refused the token (HTTP {status})")
        if status >= 500:
            raise ConnectionError(f"InfluxDB at {self._base} answered /ping with HTTP {status}")
        if self._debug:
            import logging

            logging.getLogger(__name__).info("InfluxDB3Sink connected to %s (ping: HTTP %s)", self._base, status)
