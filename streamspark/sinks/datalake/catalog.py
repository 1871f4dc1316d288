"""Registering the lake's files in an Iceberg catalog (pyiceberg).

Two backends, picked by ``catalog_url``:

- ``http(s)://…`` → the standard Iceberg REST catalog protocol (``catalog_auth_token`` is
  sent as a bearer token; ``catalog_properties`` may add ``credential``, ``warehouse``…);
- ``sqlite:///…`` / ``postgresql://…`` (or ``None`` with local storage) → pyiceberg's SQL
  catalog; with ``None`` it lives in ``<lake root>/_catalog/catalog.db``.

Each micro-batch's files are added in one snapshot whose summary records
``streamspark.query-id`` and ``streamspark.batch-id``; committing a batch that a snapshot
already records is skipped, which makes a replayed batch register its files only once.

>>> cat = LakeCatalog(LakeStorage("/tmp/lake-doc"), "readings", ["year"], catalog_url=None)
>>> cat.describe()
'sql catalog sqlite:////tmp/lake-doc/_catalog/catalog.db, table default.readings'
"""

from __future__ import annotations

import logging
import os
from typing import Any, Callable, Optional, Sequence

import pyarrow as pa

from .._iceberg_races import ensure_namespace, open_catalog
from ._layout import plain_schema
from .storage import LakeStorage

__all__ = ("LakeCatalog", "LakeCatalogError", "BATCH_PROPERTY", "QUERY_PROPERTY")

logger = logging.getLogger(__name__)

QUERY_PROPERTY = "streamspark.query-id"
BATCH_PROPERTY = "streamspark.batch-id"


class LakeCatalogError(Exception):
    """The catalog could not be reached, or the table does not fit the sink."""


def _fileio_properties(storage: LakeStorage) -> dict[str, str]:
    """pyiceberg FileIO settings equivalent to the storage's fsspec options."""
    opts = storage.options
    props: dict[str, str] = {}
    if storage.kind == "s3":
        client = opts.get("client_kwargs") or {}
        for ours, theirs in (("key", "s3.access-key-id"), ("secret", "s3.secret-access-key"), ("token", "s3.session-token")):
            if opts.get(ours):
                props[theirs] = str(opts[ours])
        endpoint = opts.get("endpoint_url") or client.get("endpoint_url")
        if endpoint:
            props["s3.endpoint"] = str(endpoint)
        region = client.get("region_name") or opts.get("region")
        props["s3.region"] = str(region or os.environ.get("AWS_REGION") or "us-east-1")
    elif storage.kind == "azure":
        for ours, theirs in (
            ("connection_string", "adls.connection-string"),
            ("account_name", "adls.account-name"),
            ("account_key", "adls.account-key"),
            ("sas_token", "adls.sas-token"),
        ):
            if opts.get(ours):
                props[theirs] = str(opts[ours])
        props["py-io-impl"] = "pyiceberg.io.fsspec.FsspecFileIO"
    elif storage.kind == "gcs":
        for ours, theirs in (("project", "gcs.project-id"), ("endpoint_url", "gcs.service.host"), ("token", "gcs.oauth2.token")):
            if isinstance(opts.get(ours), str):
                props[theirs] = str(opts[ours])
        props["py-io-impl"] = "pyiceberg.io.fsspec.FsspecFileIO"
    return props


class LakeCatalog:
    """The Iceberg table behind a lake sink. Picklable; connects lazily.

    :param storage: where the data files are.
    :param table_name: the table; ``namespace`` its namespace.
    :param hive_columns: the partition columns (identity partitions, in this order).
    :param catalog_url: REST endpoint, SQL URI, or ``None`` (embedded SQL catalog for local storage).
    :param auth_token: bearer token for a REST catalog.
    :param properties: extra pyiceberg catalog properties.
    """

    def __init__(
        self,
        storage: LakeStorage,
        table_name: str,
        hive_columns: Sequence[str],
        catalog_url: Optional[str] = None,
        auth_token: Optional[str] = None,
        namespace: str = "default",
        properties: Optional[dict[str, str]] = None,
    ) -> None:
        self.storage = storage
        self.table_name = table_name
        self.namespace = namespace
        self.hive_columns = list(hive_columns)
        self.auth_token = auth_token
        self.properties = dict(properties or {})
        if catalog_url is None and storage.kind == "local":
            os.makedirs(os.path.join(storage.root, "_catalog"), exist_ok=True)
            catalog_url = f"sqlite:///{os.path.join(storage.root, '_catalog', 'catalog.db')}"
        self.url = catalog_url
        self.kind = "rest" if catalog_url and catalog_url.startswith(("http://", "https://")) else "sql"
        self._catalog: Any = None

    @property
    def enabled(self) -> bool:
        return self.url is not None

    @property
    def identifier(self) -> str:
        return f"{self.namespace}.{self.table_name}"

    def describe(self) -> str:
        return f"{self.kind} catalog {self.url}, table {self.identifier}"

    # --- connection ----------------------------------------------------------------------
    def catalog(self) -> Any:
        if self._catalog is None:
            from pyiceberg.catalog import load_catalog

            props: dict[str, str] = {**_fileio_properties(self.storage), **self.properties}
            try:
                if self.kind == "rest":
                    if self.auth_token:
                        props.setdefault("token", self.auth_token)
                    self._catalog = open_catalog(lambda: load_catalog("streamspark-lake", type="rest", uri=self.url, **props))
                else:
                    warehouse = props.pop("warehouse", None) or self._sql_warehouse()
                    self._catalog = open_catalog(
                        lambda: load_catalog("streamspark-lake", type="sql", uri=self.url, warehouse=warehouse, **props)
                    )
                ensure_namespace(self._catalog, self.namespace)
            except Exception as exc:
                self._catalog = None
                raise LakeCatalogError(f"Cannot reach the {self.describe()}: {type(exc).__name__}: {exc}") from exc
        return self._catalog

    def _sql_warehouse(self) -> str:
        if self.storage.kind == "local":
            return "file://" + os.path.join(self.storage.root, "_catalog", "warehouse")
        return self.storage.url("_catalog/warehouse")

    def load_table(self) -> Any:
        """The table, or ``None`` when it does not exist yet."""
        from pyiceberg.exceptions import NoSuchTableError

        catalog = self.catalog()
        try:
            return catalog.load_table(self.identifier)
        except NoSuchTableError:
            return None
        except Exception as exc:
            raise LakeCatalogError(f"Cannot load {self.identifier} from the {self.describe()}: {exc}") from exc

    def arrow_schema(self) -> Optional[pa.Schema]:
        table = self.load_table()
        return table.schema().as_arrow() if table is not None else None

    # --- table shape ---------------------------------------------------------------------
    def partition_columns(self, table: Any) -> list[str]:
        schema = table.schema()
        return [schema.find_field(f.source_id).name for f in table.spec().fields]

    def validate(self, table: Any) -> None:
        """Raise when the table's partition spec is not the sink's hive columns."""
        existing = self.partition_columns(table)
        if existing and existing != self.hive_columns:
            raise LakeCatalogError(
                f"Partition spec mismatch for {self.identifier}: the table is partitioned by {existing}, "
                f"the sink writes hive_columns={self.hive_columns}. Use the table's columns, or another table."
            )
        transforms = {str(f.transform) for f in table.spec().fields}
        if existing and transforms != {"identity"}:
            raise LakeCatalogError(
                f"{self.identifier} uses partition transforms {sorted(transforms)}; the lake sink needs identity partitions"
            )

    def create_table(self, schema: pa.Schema) -> Any:
        """Create the table from an Arrow schema, partitioned by the hive columns."""
        from pyiceberg.exceptions import TableAlreadyExistsError

        catalog = self.catalog()
        try:
            with catalog.create_table_transaction(self.identifier, schema=schema) as tx:
                with tx.update_spec() as spec:
                    for col in self.hive_columns:
                        spec.add_identity(col)
                tx.set_properties(
                    {"created-by": "streamspark TSDataLakeSink", "write.data.path": self.storage.url(self.table_name)}
                )
        except TableAlreadyExistsError:
            pass
        table = catalog.load_table(self.identifier)
        logger.info("Created Iceberg table %s partitioned by %s (%s)", self.identifier, self.hive_columns, self.describe())
        return table

    # --- commits -------------------------------------------------------------------------
    @staticmethod
    def committed(table: Any, query_id: str, batch_id: int) -> bool:
        """Whether a snapshot of ``table`` already records this (query, batch)."""
        for snapshot in reversed(table.metadata.snapshots):
            summary = snapshot.summary
            props = summary.additional_properties if summary is not None else {}
            if props.get(QUERY_PROPERTY) == query_id:
                recorded = int(props.get(BATCH_PROPERTY, -1))
                if recorded == batch_id:
                    return True
                if recorded < batch_id:
                    return False  # batches commit in order: nothing newer for this query
        return False

    def commit_files(
        self,
        files: list[str],
        schemas: list[pa.Schema],
        query_id: str,
        batch_id: int,
        auto_discover: bool = True,
        conform: Optional[Callable[[pa.Schema], None]] = None,
    ) -> bool:
        """Register ``files`` (full URLs) as one snapshot; ``False`` when the batch was already registered.

        :param conform: called with the table's (plain) Arrow schema just before the files are
            added, to make them match it (the sink rewrites files whose column types differ).
        """
        try:
            table = self.load_table()
            if table is None:
                if not auto_discover:
                    raise LakeCatalogError(f"Table {self.identifier} does not exist and auto_discover=False")
                table = self.create_table(_merge(schemas))
            else:
                self.validate(table)
            if self.committed(table, query_id, batch_id):
                logger.info("Batch %d of query %s is already in %s: skipping its commit", batch_id, query_id, self.identifier)
                return False
            table = self._evolve(table, schemas)
            if conform is not None:
                conform(plain_schema(table.schema().as_arrow()))
            table.add_files(
                files,
                snapshot_properties={QUERY_PROPERTY: query_id, BATCH_PROPERTY: str(batch_id)},
                check_duplicate_files=False,
            )
        except LakeCatalogError:
            raise
        except Exception as exc:
            raise LakeCatalogError(
                f"Could not register {len(files)} file(s) of batch {batch_id} in the {self.describe()}: "
                f"{type(exc).__name__}: {exc}"
            ) from exc
        logger.info("Registered %d file(s) of batch %d in %s", len(files), batch_id, self.identifier)
        return True

    def _evolve(self, table: Any, schemas: list[pa.Schema]) -> Any:
        current = table.schema().as_arrow()
        new_fields = [f for s in schemas for f in s if current.get_field_index(f.name) < 0]
        if not new_fields:
            return table
        with table.update_schema() as update:
            update.union_by_name(_merge([pa.schema(new_fields)]))
        logger.info("Added column(s) %s to %s", sorted({f.name for f in new_fields}), self.identifier)
        return table.refresh()

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state["_catalog"] = None
        return state


def _merge(schemas: list[pa.Schema]) -> pa.Schema:
    """One schema from several files' schemas (first type wins, ints widen to floats)."""
    fields: dict[str, pa.Field] = {}
    for schema in schemas:
        for field in schema:
            seen = fields.get(field.name)
            if seen is None:
                fields[field.name] = field
            elif pa.types.is_integer(seen.type) and pa.types.is_floating(field.type):
                fields[field.name] = field
    return pa.schema(list(fields.values()))
