"""``MongoDBSink``: upsert records as MongoDB documents with ``bulk_write``.

Guarantee: exactly-once in effect with the default matcher (``_id`` = message key) and the
``UpdateOne``/``ReplaceOne`` methods: a replay writes the same fields again. Without
transactions a failed bulk write may be partly applied (the reference's caveat); the replay
then completes it.

>>> sink = MongoDBSink(host="localhost", db="app", collection="events")
"""

from __future__ import annotations

import logging
from typing import Any, Callable, Literal, Optional

from ..base._delivery import import_optional
from ..base.batch import SinkBatch
from ..base.item import SinkItem
from ..base.sink import BatchingSink
from ._values import key_text, pop_connect_callbacks, with_metadata

__all__ = ("MongoDBSink",)

logger = logging.getLogger(__name__)

MongoQueryFilter = dict[str, Any]
MongoValue = dict[str, Any]


def _default_document_matcher(item: SinkItem) -> MongoQueryFilter:
    return {"_id": key_text(item.key)}


class MongoDBSink(BatchingSink):
    """Write dict records to a MongoDB collection.

    :param document_matcher: ``callable(SinkItem) -> filter``; default ``{"_id": <key>}``.
    :param update_method: ``"UpdateOne"`` / ``"UpdateMany"`` set only the record's fields
        (``$set``); ``"ReplaceOne"`` replaces the whole document.
    :param upsert: insert when nothing matches (``_id`` from the filter/value, else a new ObjectId).
    :param add_message_metadata: add ``__key``, ``__timestamp``, ``__headers``.
    :param add_topic_metadata: add ``__topic``, ``__partition``, ``__offset``.
    :param value_selector: ``callable(document) -> document`` applied last (after metadata).
    :param authentication_timeout_ms: server selection / connect timeout.
    :param kwargs: passed to ``pymongo.MongoClient``, except ``on_client_connect_success`` and
        ``on_client_connect_failure`` (see :class:`~streamspark.sinks.base.BaseSink`).

    Needs ``pip install "streamspark[mongodb]"``.
    """

    def __init__(
        self,
        host: str,
        db: str,
        collection: str,
        username: Optional[str] = None,
        password: Optional[str] = None,
        port: int = 27017,
        document_matcher: Callable[[SinkItem], MongoQueryFilter] = _default_document_matcher,
        update_method: Literal["UpdateOne", "UpdateMany", "ReplaceOne"] = "UpdateOne",
        upsert: bool = True,
        add_message_metadata: bool = False,
        add_topic_metadata: bool = False,
        authentication_timeout_ms: int = 15000,
        value_selector: Optional[Callable[[MongoValue], MongoValue]] = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(*pop_connect_callbacks(kwargs))
        if update_method not in ("UpdateOne", "UpdateMany", "ReplaceOne"):
            raise ValueError(f"update_method must be UpdateOne, UpdateMany or ReplaceOne, got {update_method!r}")
        # what ``kwargs`` name wins over the parameters above
        self._params = {
            "host": host,
            "port": port,
            "username": username,
            "password": password,
            "serverSelectionTimeoutMS": authentication_timeout_ms,
            "connectTimeoutMS": authentication_timeout_ms,
            **kwargs,
        }
        self._db = db
        self._collection = collection
        self._matcher = document_matcher
        self._method = update_method
        self._upsert = upsert
        self._message_meta = add_message_metadata
        self._topic_meta = add_topic_metadata
        self._selector = value_selector
        self._client: Any = None

    def setup(self) -> None:
        pymongo = import_optional("pymongo", "MongoDBSink", "mongodb")
        self._client = pymongo.MongoClient(**self._params)
        try:
            self._client.admin.command("ping")
        except pymongo.errors.PyMongoError as exc:
            raise ConnectionError(f"MongoDB at {self._params['host']}:{self._params['port']} is unreachable: {exc}") from None

    def write(self, batch: SinkBatch) -> None:
        pymongo = import_optional("pymongo", "MongoDBSink", "mongodb")
        if self._client is None:
            self.setup()
        ops = []
        for item in batch:
            if not isinstance(item.value, dict):
                raise TypeError(
                    f"MongoDBSink accepts dict values only, got {type(item.value).__name__} "
                    f"at {batch.topic}[{batch.partition}]@{item.offset}"
                )
            doc = with_metadata(item.value, item, batch, self._message_meta, self._topic_meta)
            if self._selector is not None:
                doc = self._selector(doc)
            match = self._matcher(item)
            if self._method == "ReplaceOne":
                ops.append(pymongo.ReplaceOne(match, doc, upsert=self._upsert))
            elif self._method == "UpdateMany":
                ops.append(pymongo.UpdateMany(match, {"$set": doc}, upsert=self._upsert))
            else:
                ops.append(pymongo.UpdateOne(match, {"$set": doc}, upsert=self._upsert))
        try:
            result = self._client[self._db][self._collection].bulk_write(ops, ordered=True)
        except pymongo.errors.BulkWriteError as exc:
            raise RuntimeError(f"MongoDB refused part of the batch: {exc.details.get('writeErrors', [])[:3]}") from None
        except (pymongo.errors.ConnectionFailure, pymongo.errors.ServerSelectionTimeoutError) as exc:
            raise ConnectionError(f"MongoDB write failed: {exc}") from None
        except pymongo.errors.PyMongoError as exc:
            raise RuntimeError(f"MongoDB refused the batch: {exc}") from None
        logger.debug("MongoDBSink: %s", result.bulk_api_result)
