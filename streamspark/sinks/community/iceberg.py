"""``IcebergSink``: append batches to an Apache Iceberg table (pyiceberg).

Catalogs: AWS Glue (``AWSIcebergConfig``, as the reference), and any pyiceberg catalog with
``IcebergCatalogConfig`` (REST, SQL, ...). Rows: ``_timestamp`` (Kafka timestamp, UTC),
``_key`` (string) and the value's top-level keys (a non-dict value goes to ``_value``). The
table is created when missing (partitioned by day of ``_timestamp`` unless ``partition_spec``
says otherwise) and new keys evolve its schema.

Guarantee: **exactly-once**. Every append is one snapshot tagged with the flush's delivery
token; a replayed micro-batch finds its token and appends nothing. Concurrent tasks'
commit conflicts are retried.

>>> config = IcebergCatalogConfig(name="lake", properties={"type": "sql", "uri": "sqlite:///cat.db",
...                                                         "warehouse": "file:///tmp/warehouse"})
>>> sink = IcebergSink(table_name="default.events", config=config)
"""

from __future__ import annotations

import json
import logging
import os
import random
import time
from typing import Any, Optional

import pyarrow as pa

from .._iceberg_races import ensure_namespace, open_catalog
from ..base._delivery import import_optional
from ..base.batch import SinkBatch
from ..base.sink import BatchingSink, ClientConnectFailureCallback, ClientConnectSuccessCallback
from ._values import key_text

__all__ = ("IcebergSink", "BaseIcebergConfig", "AWSIcebergConfig", "IcebergCatalogConfig")

logger = logging.getLogger(__name__)

TOKEN_PROPERTY = "streamspark.delivery-token"
_COMMIT_ATTEMPTS = 8
_TOKEN_LOOKBACK = 2000  # snapshots searched for a token


class BaseIcebergConfig:
    """How to reach an Iceberg catalog; subclasses build it with :meth:`load_catalog`."""

    def load_catalog(self) -> Any:
        raise NotImplementedError


class AWSIcebergConfig(BaseIcebergConfig):
    """AWS Glue catalog with data in S3 (``aws_s3_uri``, e.g. ``s3://bucket/warehouse/``).
    Credentials default to the ``AWS_*`` environment variables; ``AWS_ENDPOINT_URL_GLUE`` /
    ``AWS_ENDPOINT_URL_S3`` (or ``AWS_ENDPOINT_URL``) point it at an AWS-compatible service."""

    def __init__(
        self,
        aws_s3_uri: str,
        aws_region: Optional[str] = None,
        aws_access_key_id: Optional[str] = None,
        aws_secret_access_key: Optional[str] = None,
        aws_session_token: Optional[str] = None,
    ) -> None:
        self.location = aws_s3_uri
        self.properties = {
            "type": "glue",
            "warehouse": aws_s3_uri,
            "glue.region": aws_region or os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION"),
            "glue.access-key-id": aws_access_key_id or os.environ.get("AWS_ACCESS_KEY_ID"),
            "glue.secret-access-key": aws_secret_access_key or os.environ.get("AWS_SECRET_ACCESS_KEY"),
            "glue.session-token": aws_session_token or os.environ.get("AWS_SESSION_TOKEN"),
            "s3.region": aws_region or os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION"),
            "s3.access-key-id": aws_access_key_id or os.environ.get("AWS_ACCESS_KEY_ID"),
            "s3.secret-access-key": aws_secret_access_key or os.environ.get("AWS_SECRET_ACCESS_KEY"),
            "s3.session-token": aws_session_token or os.environ.get("AWS_SESSION_TOKEN"),
            # AWS-compatible endpoints (LocalStack, moto, MinIO) through the SDKs' usual variables
            "glue.endpoint": os.environ.get("AWS_ENDPOINT_URL_GLUE") or os.environ.get("AWS_ENDPOINT_URL"),
            "s3.endpoint": os.environ.get("AWS_ENDPOINT_URL_S3") or os.environ.get("AWS_ENDPOINT_URL"),
        }

    def load_catalog(self) -> Any:
        catalog = import_optional("pyiceberg.catalog", "IcebergSink", "iceberg")
        return catalog.load_catalog("glue", **{k: v for k, v in self.properties.items() if v})


class IcebergCatalogConfig(BaseIcebergConfig):
    """Any pyiceberg catalog: ``properties`` as for ``pyiceberg.catalog.load_catalog``
    (``{"type": "rest", "uri": ...}``, ``{"type": "sql", "uri": "sqlite:///...", "warehouse": ...}``).
    ``location``: where new tables go (default: the catalog's warehouse)."""

    def __init__(
        self, name: str = "default", properties: Optional[dict[str, Any]] = None, location: Optional[str] = None
    ) -> None:
        self.name = name
        self.properties = dict(properties or {})
        self.location = location

    def load_catalog(self) -> Any:
        catalog = import_optional("pyiceberg.catalog", "IcebergSink", "iceberg")
        return catalog.load_catalog(self.name, **self.properties)


class IcebergSink(BatchingSink):
    """Append each flush to an Iceberg table.

    :param table_name: ``namespace.table`` (the namespace is created when missing).
    :param config: an :class:`AWSIcebergConfig` or :class:`IcebergCatalogConfig`.
    :param data_catalog_spec: ``"aws_glue"`` (with ``AWSIcebergConfig``) or ``"pyiceberg"``
        (with ``IcebergCatalogConfig``).
    :param schema: a pyiceberg ``Schema`` for a new table (default: ``_timestamp``, ``_key``).
    :param partition_spec: a pyiceberg ``PartitionSpec`` (default: day of ``_timestamp``).

    Needs ``pip install "streamspark[iceberg]"`` (``[iceberg-aws]`` for Glue).
    """

    def __init__(
        self,
        table_name: str,
        config: BaseIcebergConfig,
        data_catalog_spec: str = "aws_glue",
        schema: Any = None,
        partition_spec: Any = None,
        on_client_connect_success: Optional[ClientConnectSuccessCallback] = None,
        on_client_connect_failure: Optional[ClientConnectFailureCallback] = None,
    ) -> None:
        super().__init__(on_client_connect_success, on_client_connect_failure)
        if isinstance(config, AWSIcebergConfig) and data_catalog_spec != "aws_glue":
            raise ValueError(f"AWSIcebergConfig goes with data_catalog_spec='aws_glue', not {data_catalog_spec!r}")
        if not isinstance(config, BaseIcebergConfig):
            raise TypeError("config must be an AWSIcebergConfig or an IcebergCatalogConfig")
        if "." not in table_name:
            raise ValueError(f"table_name must be 'namespace.table', got {table_name!r}")
        self._table_name = table_name
        self._config = config
        self._schema = schema
        self._partition_spec = partition_spec
        self._client: Any = None  # the table
        self._catalog: Any = None

    def __getstate__(self) -> dict[str, Any]:
        state = super().__getstate__()
        state["_catalog"] = None
        return state

    # -- table --------------------------------------------------------------------------------
    def setup(self) -> None:
        self._catalog = open_catalog(self._config.load_catalog)  # tasks may open a fresh catalog together
        self._client = self._load_or_create()

    def _default_schema_and_spec(self) -> tuple[Any, Any]:
        from pyiceberg.partitioning import PartitionField, PartitionSpec
        from pyiceberg.schema import Schema
        from pyiceberg.transforms import DayTransform
        from pyiceberg.types import NestedField, StringType, TimestamptzType

        schema = self._schema or Schema(
            NestedField(1, "_timestamp", TimestamptzType(), required=False),
            NestedField(2, "_key", StringType(), required=False),
        )
        spec = self._partition_spec
        if spec is None:
            ts = schema.find_field("_timestamp") if "_timestamp" in {f.name for f in schema.fields} else None
            spec = (
                PartitionSpec(
                    PartitionField(source_id=ts.field_id, field_id=1000, transform=DayTransform(), name="_timestamp_day")
                )
                if ts is not None
                else PartitionSpec()
            )
        return schema, spec

    def _load_or_create(self) -> Any:
        exceptions = import_optional("pyiceberg.exceptions", "IcebergSink", "iceberg")
        namespace = self._table_name.rsplit(".", 1)[0]
        try:
            return self._catalog.load_table(self._table_name)
        except exceptions.NoSuchTableError:
            pass
        ensure_namespace(self._catalog, namespace)  # other tasks may create it at the same moment
        schema, spec = self._default_schema_and_spec()
        location = getattr(self._config, "location", None)
        kwargs: dict[str, Any] = {"schema": schema, "partition_spec": spec}
        if location and not isinstance(self._config, AWSIcebergConfig):
            kwargs["location"] = location.rstrip("/") + "/" + self._table_name.replace(".", "/")
        try:
            return self._catalog.create_table(self._table_name, **kwargs)
        except exceptions.TableAlreadyExistsError:  # another task created it first
            return self._catalog.load_table(self._table_name)

    # -- writing ------------------------------------------------------------------------------
    def write(self, batch: SinkBatch) -> None:
        self._append([batch])

    def flush(self) -> None:
        """Append every pending batch as ONE snapshot."""
        self._flush_together(self._append)

    @staticmethod
    def _rows(batches: list[SinkBatch]) -> pa.Table:
        rows = []
        for batch in batches:
            for item in batch:
                row: dict[str, Any] = {"_timestamp": item.timestamp, "_key": key_text(item.key)}
                if isinstance(item.value, dict):
                    row.update(item.value)
                else:
                    row["_value"] = item.value if isinstance(item.value, (str, type(None))) else json.dumps(item.value)
                rows.append(row)
        names = list(dict.fromkeys(k for row in rows for k in row))  # every key of the batch, in order
        table = pa.Table.from_pydict({k: [row.get(k) for row in rows] for k in names})
        ts = table.column("_timestamp").cast(pa.int64()).cast(pa.timestamp("ms", tz="UTC")).cast(pa.timestamp("us", tz="UTC"))
        table = table.set_column(table.schema.get_field_index("_timestamp"), "_timestamp", ts)
        if pa.types.is_null(table.schema.field("_key").type):
            table = table.set_column(table.schema.get_field_index("_key"), "_key", table.column("_key").cast(pa.string()))
        return table

    def _has_token(self, table: Any, token: str) -> bool:
        for n, snapshot in enumerate(reversed(table.metadata.snapshots)):
            if n >= _TOKEN_LOOKBACK:
                return False
            summary = snapshot.summary
            if summary is not None and summary.additional_properties.get(TOKEN_PROPERTY) == token:
                return True
        return False

    def _conform(self, data: pa.Table, table: Any) -> pa.Table:
        """Evolve the schema for new columns, then shape ``data`` like the table (missing
        columns as nulls, types cast; a value that cannot take the column's type fails)."""
        from ..datalake._layout import conform_table

        target = table.schema().as_arrow()
        new = [f for f in data.schema if target.get_field_index(f.name) < 0]
        if new:
            with table.update_schema() as update:
                update.union_by_name(conform_table(data.select([f.name for f in new]), None).schema)
            target = table.schema().as_arrow()
        data = conform_table(data, target)
        columns = [
            data.column(f.name) if data.schema.get_field_index(f.name) >= 0 else pa.nulls(len(data), f.type) for f in target
        ]
        return pa.Table.from_arrays(columns, schema=pa.schema([pa.field(f.name, f.type, nullable=True) for f in target]))

    def _append(self, batches: list[SinkBatch]) -> None:
        exceptions = import_optional("pyiceberg.exceptions", "IcebergSink", "iceberg")
        if self._client is None:
            self.setup()
        data = self._rows(batches)
        token = self.delivery_token()
        for attempt in range(_COMMIT_ATTEMPTS):
            table = self._client
            try:
                table = table.refresh()
                if token is not None and self._has_token(table, token):
                    logger.info("IcebergSink: %s already appended (replayed micro-batch); skipping", token)
                    return
                shaped = self._conform(data, table)
                table.append(shaped, snapshot_properties={TOKEN_PROPERTY: token} if token else {})
                return
            except exceptions.CommitFailedException:
                if attempt == _COMMIT_ATTEMPTS - 1:
                    raise
                delay = min(0.1 * 2**attempt, 3.0) * (1 + random.random())
                logger.info("IcebergSink: commit conflict on %s, retrying in %.2fs", self._table_name, delay)
                time.sleep(delay)
