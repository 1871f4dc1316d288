"""The common body of ``InfluxDB1Sink`` and ``InfluxDB3Sink``."""

from __future__ import annotations

import logging
from typing import Any, Optional

from ..base.batch import SinkBatch
from ..base.sink import BatchingSink, ClientConnectFailureCallback, ClientConnectSuccessCallback
from .http import post_lines
from .points import FieldsSetter, MeasurementSetter, PointConverter, TagsSetter, TimePrecision, TimeSetter

logger = logging.getLogger(__name__)


class _InfluxSink(BatchingSink):
    """Converts each partition's batch to line protocol and POSTs it in ``batch_size`` chunks."""

    def __init__(
        self,
        measurement: MeasurementSetter,
        fields_keys: FieldsSetter,
        tags_keys: TagsSetter,
        time_setter: Optional[TimeSetter],
        time_precision: TimePrecision,
        allow_missing_fields: bool,
        include_metadata_tags: bool,
        convert_ints_to_floats: bool,
        batch_size: int,
        request_timeout_ms: int,
        on_client_connect_success: Optional[ClientConnectSuccessCallback],
        on_client_connect_failure: Optional[ClientConnectFailureCallback],
    ) -> None:
        super().__init__(on_client_connect_success, on_client_connect_failure)
        if batch_size < 1:
            raise ValueError("batch_size must be at least 1")
        self._converter = PointConverter(
            measurement,
            fields_keys,
            tags_keys,
            time_setter,
            time_precision,
            allow_missing_fields,
            include_metadata_tags,
            convert_ints_to_floats,
        )
        self._precision = time_precision
        self._batch_size = batch_size
        self._timeout_s = request_timeout_ms / 1000

    # subclasses: where and how to write
    def _write_url(self) -> str:
        raise NotImplementedError

    def _headers(self) -> dict[str, str]:
        return {}

    _gzip = False

    def write(self, batch: SinkBatch) -> None:
        conv = self._converter
        url = self._write_url()
        for chunk in batch.iter_chunks(self._batch_size):
            lines = []
            for item in chunk:
                try:
                    line = conv.line(item.value, item.key, item.timestamp, batch.topic, batch.partition)
                except (KeyError, TypeError, ValueError) as exc:
                    raise type(exc)(f"{exc} (record at {batch.topic}[{batch.partition}]@{item.offset})") from None
                if line is not None:
                    lines.append(line)
            if lines:
                post_lines(url, lines, self._headers(), self._timeout_s, gzip_body=self._gzip)
        logger.debug("%s wrote %d record(s) of %s[%d]", type(self).__name__, batch.size, batch.topic, batch.partition)

    def _ping(self, url: str, headers: Optional[dict[str, str]] = None) -> Any:
        import urllib.error
        import urllib.request

        try:
            with urllib.request.urlopen(urllib.request.Request(url, headers=headers or {}), timeout=self._timeout_s) as r:
                return r.status
        except urllib.error.HTTPError as exc:
            return exc.code
        except urllib.error.URLError as exc:
            raise ConnectionError(f"InfluxDB at {url} is unreachable: {exc.reason}") from None
