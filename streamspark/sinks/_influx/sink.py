"""The common body of ``InfluxDB1Sink`` and ``InfluxDB3Sink``."""

from __future__ import annotations

import logging
from typing import Any, Callable, Optional

from ..base.batch import SinkBatch
from ..base.sink import BatchingSink, ClientConnectFailureCallback, ClientConnectSuccessCallback
from ..community._values import DictValuesOnly
from .http import InfluxDBWriteError, post_lines, ssl_context
from .points import FieldsSetter, MeasurementSetter, PointConverter, TagsSetter, TimePrecision, TimeSetter, decoded_key

logger = logging.getLogger(__name__)


class _InfluxSink(DictValuesOnly, BatchingSink):
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
            key_tag=self._key_tag,
        )
        self._precision = time_precision
        self._batch_size = batch_size
        self._timeout_s = request_timeout_ms / 1000

    # subclasses: where and how to write
    def _write_url(self) -> str:
        raise NotImplementedError

    def _headers(self) -> dict[str, str]:
        return {}

    #: the record key as the ``__key`` tag (``include_metadata_tags``): decoded for InfluxDB 1,
    #: ``str()`` for InfluxDB 3 (as their clients write a bytes key: ``kk`` and ``b'kk'``)
    _key_tag: Callable[[Any], str] = staticmethod(decoded_key)

    _gzip = False
    #: HTTPS certificates are checked (InfluxDB3Sink's ``verify_ssl``)
    _verify_ssl = True
    #: a write refused for the retention policy (HTTP 422) fails the batch; when ``False`` it is
    #: logged and the chunk skipped (InfluxDB3Sink's ``raise_on_retention_violation``)
    _raise_on_retention_violation = True

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
                try:
                    post_lines(url, lines, self._headers(), self._timeout_s, gzip_body=self._gzip, verify_ssl=self._verify_ssl)
                except InfluxDBWriteError as exc:
                    if self._raise_on_retention_violation or not _is_retention_violation(exc):
                        raise
                    logger.warning(
                        "InfluxDB refused %d point(s) of %s[%d] (offsets %d-%d) for its retention policy; skipped: %s",
                        len(lines),
                        batch.topic,
                        batch.partition,
                        chunk[0].offset,
                        chunk[-1].offset,
                        exc,
                    )
        logger.debug("%s wrote %d record(s) of %s[%d]", type(self).__name__, batch.size, batch.topic, batch.partition)

    def _ping(self, url: str, headers: Optional[dict[str, str]] = None) -> Any:
        import urllib.error
        import urllib.request

        try:
            request = urllib.request.Request(url, headers=headers or {})
            with urllib.request.urlopen(request, timeout=self._timeout_s, context=ssl_context(self._verify_ssl)) as r:
                return r.status
        except urllib.error.HTTPError as exc:
            return exc.code
        except urllib.error.URLError as exc:
            raise ConnectionError(f"InfluxDB at {url} is unreachable: {exc.reason}") from None


def _is_retention_violation(exc: InfluxDBWriteError) -> bool:
    return exc.status == 422 and "retention policy" in str(exc).lower()
