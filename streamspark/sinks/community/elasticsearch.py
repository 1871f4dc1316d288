"""``ElasticsearchSink``: bulk-index records into Elasticsearch (or OpenSearch) over its REST API.

Guarantee: exactly-once in effect with the default document ids (the message key): a replay
re-indexes the same documents. With ``document_id_setter`` returning None, ids are generated
and a replay can duplicate (at-least-once).

The bulk API is spoken directly over HTTP (no client library), so the sink works with
Elasticsearch 7/8/9 and OpenSearch alike.

>>> sink = ElasticsearchSink(url="http://localhost:9200", index="events")
"""

from __future__ import annotations

import base64
import json
import logging
import time
import urllib.error
import urllib.request
from typing import Any, Callable, Optional

from ..base.batch import SinkBatch
from ..base.exceptions import SinkBackpressureError
from ..base.item import SinkItem
from ..base.sink import BatchingSink, ClientConnectFailureCallback, ClientConnectSuccessCallback
from ._values import key_text, with_metadata

__all__ = ("ElasticsearchSink", "ElasticsearchBulkError")

logger = logging.getLogger(__name__)

_RETRYABLE = {429, 502, 503, 504}


class ElasticsearchBulkError(Exception):
    """Documents of a bulk request were refused."""


def _default_document_id_setter(item: SinkItem) -> Optional[str]:
    key = key_text(item.key)
    return None if key is None else str(key)


class ElasticsearchSink(BatchingSink):
    """Index dict records (documents) in ``index`` with the bulk API.

    :param url: the cluster address, e.g. ``http://localhost:9200`` (``user:pass@`` allowed).
    :param index: the index name.
    :param mapping: a mapping for the index, created when it does not exist; by default the
        server maps fields dynamically.
    :param document_id_setter: ``callable(SinkItem) -> id | None``; default: the message key.
    :param batch_size: documents per bulk request.
    :param max_bulk_retries: how often documents refused with 429/5xx are retried (with backoff);
        after that the batch backpressures on 429 and fails otherwise.
    :param ignore_bulk_upload_errors: log refused documents instead of failing.
    :param add_message_metadata: add ``__key``, ``__timestamp``, ``__headers``.
    :param add_topic_metadata: add ``__topic``, ``__partition``, ``__offset``.
    :param kwargs: ``headers`` (dict), ``basic_auth`` ((user, password)), ``api_key``,
        ``request_timeout`` (seconds, default 30).
    """

    def __init__(
        self,
        url: str,
        index: str,
        mapping: Optional[dict] = None,
        document_id_setter: Optional[Callable[[SinkItem], Optional[str]]] = _default_document_id_setter,
        batch_size: int = 500,
        max_bulk_retries: int = 3,
        ignore_bulk_upload_errors: bool = False,
        add_message_metadata: bool = False,
        add_topic_metadata: bool = False,
        on_client_connect_success: Optional[ClientConnectSuccessCallback] = None,
        on_client_connect_failure: Optional[ClientConnectFailureCallback] = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(on_client_connect_success, on_client_connect_failure)
        unknown = set(kwargs) - {"headers", "basic_auth", "api_key", "request_timeout"}
        if unknown:
            raise TypeError(f"ElasticsearchSink got unexpected options: {sorted(unknown)}")
        self._url = url.rstrip("/")
        self._index = index
        self._mapping = mapping
        self._id_setter = document_id_setter
        self._batch_size = batch_size
        self._retries = max_bulk_retries
        self._ignore_errors = ignore_bulk_upload_errors
        self._message_meta = add_message_metadata
        self._topic_meta = add_topic_metadata
        self._timeout = float(kwargs.get("request_timeout", 30))
        headers = {"Content-Type": "application/json", "Accept": "application/json", **kwargs.get("headers", {})}
        if kwargs.get("basic_auth"):
            user, password = kwargs["basic_auth"]
            headers["Authorization"] = "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()
        if kwargs.get("api_key"):
            headers["Authorization"] = f"ApiKey {kwargs['api_key']}"
        self._headers = headers

    def _request(
        self, method: str, path: str, body: Optional[bytes] = None, content_type: Optional[str] = None
    ) -> tuple[int, Any]:
        headers = dict(self._headers)
        if content_type:
            headers["Content-Type"] = content_type
        req = urllib.request.Request(f"{self._url}{path}", data=body, method=method, headers=headers)
        try:
            with urllib.request.urlopen(req, timeout=self._timeout) as resp:
                text = resp.read()
                return resp.status, json.loads(text) if text else None
        except urllib.error.HTTPError as exc:
            text = exc.read()
            try:
                return exc.code, json.loads(text) if text else None
            except ValueError:
                return exc.code, text.decode(errors="replace")
        except urllib.error.URLError as exc:
            raise ConnectionError(f"Elasticsearch at {self._url} is unreachable: {exc.reason}") from None

    def setup(self) -> None:
        status, _ = self._request("GET", "/")
        if status in (401, 403):
            raise PermissionError(f"Elasticsearch at {self._url} refused the credentials (HTTP {status})")
        status, _ = self._request("HEAD", f"/{self._index}")
        if status == 404 and self._mapping is not None:
            status, answer = self._request("PUT", f"/{self._index}", json.dumps(self._mapping).encode())
            if status >= 300 and "already_exists" not in str(answer):
                raise ElasticsearchBulkError(f"could not create index {self._index!r}: HTTP {status}: {answer}")

    def write(self, batch: SinkBatch) -> None:
        for chunk in batch.iter_chunks(self._batch_size):
            actions = []
            for item in chunk:
                doc = item.value if isinstance(item.value, dict) else {"value": item.value}
                doc = with_metadata(doc, item, batch, self._message_meta, self._topic_meta)
                doc_id = self._id_setter(item) if self._id_setter else None
                meta: dict[str, Any] = {"_index": self._index}
                if doc_id is not None:
                    meta["_id"] = str(doc_id)
                actions.append((meta, doc))
            self._bulk(actions)

    def _bulk(self, actions: list[tuple[dict, dict]]) -> None:
        pending = actions
        for attempt in range(self._retries + 1):
            body = "".join(json.dumps({"index": m}) + "\n" + json.dumps(d, default=str) + "\n" for m, d in pending).encode()
            status, answer = self._request("POST", "/_bulk", body, content_type="application/x-ndjson")
            if status in _RETRYABLE:
                retry, refused = pending, [(status, "request refused")]
            elif status >= 300 or not isinstance(answer, dict):
                raise ElasticsearchBulkError(f"bulk request failed: HTTP {status}: {str(answer)[:500]}")
            else:
                retry, refused = [], []
                for action, result in zip(pending, answer.get("items", [])):
                    outcome = result.get("index", {})
                    code = outcome.get("status", 500)
                    if code >= 300:
                        if code in _RETRYABLE:
                            retry.append(action)
                        refused.append((code, outcome.get("error")))
                fatal = [r for r in refused if r[0] not in _RETRYABLE]
                if fatal:
                    if self._ignore_errors:
                        logger.warning("ElasticsearchSink: %d document(s) refused, ignored: %s", len(fatal), fatal[:3])
                    else:
                        raise ElasticsearchBulkError(f"{len(fatal)} document(s) refused by {self._index!r}: {fatal[:3]}")
            if not retry:
                return
            pending = retry
            if attempt < self._retries:
                time.sleep(min(0.5 * 2**attempt, 5.0))
        if self._ignore_errors:
            logger.warning(
                "ElasticsearchSink: %d document(s) still refused after %d retries, ignored", len(pending), self._retries
            )
            return
        if any(code == 429 for code, _ in refused):
            raise SinkBackpressureError(retry_after=5.0)
        raise ElasticsearchBulkError(f"{len(pending)} document(s) refused after {self._retries} retries: {refused[:3]}")
