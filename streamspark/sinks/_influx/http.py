"""The HTTP write of both InfluxDB sinks: 429/503 with Retry-After become backpressure."""

from __future__ import annotations

import gzip
import ssl
import urllib.error
import urllib.request
from typing import Optional

from ..base.exceptions import SinkBackpressureError

__all__ = ("post_lines", "InfluxDBWriteError", "ssl_context")


class InfluxDBWriteError(Exception):
    """InfluxDB refused a write (the micro-batch fails and is replayed).

    :ivar status: the HTTP status of the refusal.
    """

    def __init__(self, message: str, status: Optional[int] = None) -> None:
        super().__init__(message)
        self.status = status


def ssl_context(verify_ssl: bool) -> Optional[ssl.SSLContext]:
    """``None`` (the default verification) or, with ``verify_ssl=False``, a context that accepts
    any certificate (self-signed servers).

    >>> ssl_context(True) is None, ssl_context(False).verify_mode == ssl.CERT_NONE
    (True, True)
    """
    if verify_ssl:
        return None
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    return context


def _retry_after(header: Optional[str], default: float) -> float:
    try:
        return max(float(header), 0.0) if header else default
    except ValueError:
        return default


def post_lines(
    url: str,
    lines: list[str],
    headers: dict[str, str],
    timeout_s: float,
    gzip_body: bool = False,
    verify_ssl: bool = True,
) -> None:
    """POST line protocol; raise SinkBackpressureError on 429 (and 503 with Retry-After)."""
    body = "\n".join(lines).encode()
    hdrs = {"Content-Type": "text/plain; charset=utf-8", **headers}
    if gzip_body:
        body = gzip.compress(body)
        hdrs["Content-Encoding"] = "gzip"
    request = urllib.request.Request(url, data=body, method="POST", headers=hdrs)
    try:
        with urllib.request.urlopen(request, timeout=timeout_s, context=ssl_context(verify_ssl)) as resp:
            resp.read()
    except urllib.error.HTTPError as exc:
        retry = exc.headers.get("Retry-After") if exc.headers else None
        if exc.code == 429 or (exc.code == 503 and retry):
            raise SinkBackpressureError(retry_after=_retry_after(retry, 1.0)) from None
        detail = exc.read().decode(errors="replace")[:500]
        raise InfluxDBWriteError(f"InfluxDB refused the write: HTTP {exc.code}: {detail}", status=exc.code) from None
    except urllib.error.URLError as exc:
        raise ConnectionError(f"InfluxDB at {url.split('?')[0]} is unreachable: {exc.reason}") from None
