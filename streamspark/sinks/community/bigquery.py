"""``BigQuerySink``: rows into a Google BigQuery table with streaming inserts.

Guarantee: at-least-once with best-effort deduplication: every row carries an ``insertId``
made of its topic, partition, offset and position, so BigQuery drops a row a replayed
micro-batch sends again (BigQuery deduplicates for about a minute, best effort).

>>> sink = BigQuerySink(project_id="my-project", location="EU", dataset_id="lake", table_name="events")
"""

from __future__ import annotations

import json
import logging
from datetime import date, datetime, timezone
from typing import Any, Optional

from ..base._delivery import import_optional
from ..base.batch import SinkBatch
from ..base.sink import BatchingSink, ClientConnectFailureCallback, ClientConnectSuccessCallback
from ._values import DictValuesOnly, key_text, require_dict

__all__ = ("BigQuerySink", "BigQueryInsertError")

logger = logging.getLogger(__name__)


class BigQueryInsertError(Exception):
    """BigQuery refused rows of a batch."""


def bigquery_type(value: Any) -> Optional[str]:
    """The column type a value gets when the sink adds a column (None: unknown yet).

    >>> [bigquery_type(v) for v in (True, 1, 1.5, "x", b"x", {"a": 1}, None)]
    ['BOOLEAN', 'INTEGER', 'FLOAT', 'STRING', 'BYTES', 'JSON', None]
    """
    if isinstance(value, bool):
        return "BOOLEAN"
    if isinstance(value, int):
        return "INTEGER"
    if isinstance(value, float):
        return "FLOAT"
    if isinstance(value, str):
        return "STRING"
    if isinstance(value, (bytes, bytearray)):
        return "BYTES"
    if isinstance(value, datetime):
        return "TIMESTAMP"
    if isinstance(value, date):
        return "DATE"
    if isinstance(value, (dict, list)):
        return "JSON"
    return None


def _json_cell(value: Any) -> Any:
    if isinstance(value, (dict, list)):
        return json.dumps(value)
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, (bytes, bytearray)):
        import base64

        return base64.b64encode(value).decode()
    return value


class BigQuerySink(DictValuesOnly, BatchingSink):
    """Write dict records as rows with ``timestamp`` (Kafka timestamp) and ``__key`` columns.

    :param project_id: Google Cloud project.
    :param location: dataset location (used when the dataset is created).
    :param dataset_id: dataset; created when missing (with ``schema_auto_update``).
    :param table_name: table; created when missing with ``timestamp`` (TIMESTAMP), ``__key``
        (STRING) and a nullable column per value key (types inferred from the values).
    :param service_account_json: credentials JSON; default: Application Default Credentials.
    :param schema_auto_update: create the dataset/table and add new nullable columns as they
        appear; existing columns are never changed. With False the table must exist and fit.
    :param ddl_timeout, insert_timeout, retry_timeout: seconds.
    :param kwargs: passed to ``bigquery.Client`` (e.g. ``client_options``, ``credentials``).

    Needs ``pip install "streamspark[bigquery]"``.
    """

    def __init__(
        self,
        project_id: str,
        location: str,
        dataset_id: str,
        table_name: str,
        service_account_json: Optional[str] = None,
        schema_auto_update: bool = True,
        ddl_timeout: float = 10.0,
        insert_timeout: float = 10.0,
        retry_timeout: float = 30.0,
        on_client_connect_success: Optional[ClientConnectSuccessCallback] = None,
        on_client_connect_failure: Optional[ClientConnectFailureCallback] = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(on_client_connect_success, on_client_connect_failure)
        self._project = project_id
        self._location = location
        self._dataset = dataset_id
        self._table_name = table_name
        self._sa_json = service_account_json
        self._auto = schema_auto_update
        self._ddl_timeout = ddl_timeout
        self._insert_timeout = insert_timeout
        self._retry_timeout = retry_timeout
        self._kwargs = kwargs
        self._client: Any = None
        self._columns: Optional[set[str]] = None

    @property
    def _table_id(self) -> str:
        return f"{self._project}.{self._dataset}.{self._table_name}"

    def setup(self) -> None:
        bigquery = import_optional("google.cloud.bigquery", "BigQuerySink", "bigquery")
        kwargs = dict(self._kwargs)
        if self._sa_json:
            service_account = import_optional("google.oauth2.service_account", "BigQuerySink", "bigquery")
            kwargs["credentials"] = service_account.Credentials.from_service_account_info(json.loads(self._sa_json))
        self._client = bigquery.Client(project=self._project, location=self._location, **kwargs)
        if self._auto:
            dataset = bigquery.Dataset(f"{self._project}.{self._dataset}")
            dataset.location = self._location
            self._client.create_dataset(dataset, exists_ok=True, timeout=self._ddl_timeout)
        self._columns = self._existing_columns()

    def _existing_columns(self) -> Optional[set[str]]:
        exceptions = import_optional("google.api_core.exceptions", "BigQuerySink", "bigquery")
        try:
            table = self._client.get_table(self._table_id, timeout=self._ddl_timeout)
        except exceptions.NotFound:
            if not self._auto:
                raise BigQueryInsertError(f"table {self._table_id} does not exist (schema_auto_update=False)") from None
            return None
        return {f.name for f in table.schema}

    def _ensure_schema(self, rows: list[dict[str, Any]]) -> None:
        bigquery = import_optional("google.cloud.bigquery", "BigQuerySink", "bigquery")
        wanted: dict[str, Optional[str]] = {}
        for row in rows:
            for c, v in row.items():
                if wanted.get(c) is None:
                    wanted[c] = bigquery_type(v)
        if self._columns is None:  # create the table with what this batch has
            schema = [bigquery.SchemaField("timestamp", "TIMESTAMP"), bigquery.SchemaField("__key", "STRING")]
            schema += [
                bigquery.SchemaField(c, t or "STRING", mode="NULLABLE")
                for c, t in wanted.items()
                if c not in ("timestamp", "__key")
            ]
            self._client.create_table(bigquery.Table(self._table_id, schema=schema), exists_ok=True, timeout=self._ddl_timeout)
            self._columns = self._existing_columns() or {f.name for f in schema}
        new = [c for c in wanted if c not in self._columns]
        if new:
            table = self._client.get_table(self._table_id, timeout=self._ddl_timeout)
            table.schema = list(table.schema) + [bigquery.SchemaField(c, wanted[c] or "STRING", mode="NULLABLE") for c in new]
            self._client.update_table(table, ["schema"], timeout=self._ddl_timeout)
            self._columns.update(new)
            logger.info("BigQuerySink: added column(s) %s to %s", new, self._table_id)

    def write(self, batch: SinkBatch) -> None:
        if self._client is None:
            self.setup()
        rows, ids = [], []
        for n, item in enumerate(batch):
            value = require_dict("BigQuerySink", item, batch)
            ts = datetime.fromtimestamp(item.timestamp / 1000, tz=timezone.utc)
            rows.append({"timestamp": ts, "__key": key_text(item.key), **value})
            ids.append(f"{batch.topic}-{batch.partition}-{item.offset}-{n}")
        if self._auto:
            self._ensure_schema(rows)
        retry = import_optional("google.api_core.retry", "BigQuerySink", "bigquery")
        errors = self._client.insert_rows_json(
            self._table_id,
            [{c: _json_cell(v) for c, v in r.items()} for r in rows],
            row_ids=ids,
            timeout=self._insert_timeout,
            retry=retry.Retry(timeout=self._retry_timeout),
        )
        if errors:
            raise BigQueryInsertError(f"BigQuery refused {len(errors)} row(s) of {self._table_id}: {errors[:3]}")
