"""``Neo4jSink``: run a Cypher query for every record, all of a batch in one transaction.

Guarantee: at-least-once; the batch's chunks commit together or not at all, so a replay never
meets a half-written batch (use ``MERGE`` in the query for exactly-once effect).

>>> sink = Neo4jSink(host="localhost", port=7687, username="neo4j", password="secret",
...                  cypher_query="MERGE (p:Person {name: event.name}) SET p.age = event.age")
"""

from __future__ import annotations

from typing import Any

from ..base._delivery import import_optional
from ..base.batch import SinkBatch
from ..base.sink import BatchingSink
from ._values import key_text, pop_connect_callbacks

__all__ = ("Neo4jSink",)


class Neo4jSink(BatchingSink):
    """Execute ``cypher_query`` per record.

    In the query the record value is ``event`` (nested keys with dots: ``event.name.first``),
    and ``__key``, ``__value``, ``__headers`` and ``__timestamp`` are bound too. Records are
    sent ``chunk_size`` at a time (``UNWIND``) inside ONE transaction per batch: every chunk
    commits, or none does.

    :param kwargs: passed to ``neo4j.GraphDatabase.driver``, except ``on_client_connect_success``
        and ``on_client_connect_failure`` (see :class:`~streamspark.sinks.base.BaseSink`).

    Needs ``pip install "streamspark[neo4j]"``.
    """

    def __init__(
        self,
        host: str,
        port: int,
        username: str,
        password: str,
        cypher_query: str,
        chunk_size: int = 10000,
        **kwargs: Any,
    ) -> None:
        super().__init__(*pop_connect_callbacks(kwargs))
        if chunk_size < 1:
            raise ValueError("chunk_size must be at least 1")
        self._uri = host if "://" in host else f"bolt://{host}:{port}"
        self._auth = (username, password)
        self._query = (
            "UNWIND $records AS record "
            "WITH record.event AS event, record.__key AS __key, record.__value AS __value, "
            "record.__headers AS __headers, record.__timestamp AS __timestamp\n" + cypher_query
        )
        self._chunk_size = chunk_size
        self._kwargs = kwargs
        self._client: Any = None

    def setup(self) -> None:
        neo4j = import_optional("neo4j", "Neo4jSink", "neo4j")
        self._client = neo4j.GraphDatabase.driver(self._uri, auth=self._auth, **self._kwargs)
        self._client.verify_connectivity()

    def write(self, batch: SinkBatch) -> None:
        if self._client is None:
            self.setup()
        with self._client.session() as session:
            tx = session.begin_transaction()
            try:
                for chunk in batch.iter_chunks(self._chunk_size):
                    records = [
                        {
                            "event": item.value,
                            "__value": item.value,
                            "__key": key_text(item.key),
                            "__headers": {k: key_text(v) for k, v in item.headers} if item.headers else {},
                            "__timestamp": item.timestamp,
                        }
                        for item in chunk
                    ]
                    tx.run(self._query, records=records).consume()
                tx.commit()
            except BaseException:
                tx.rollback()
                raise
            finally:
                tx.close()
