"""``TSDataLakeSink``: a time-series data lake of Hive-partitioned Parquet, registered in Iceberg.

Inside a Spark query the work is split this way:

- each Spark task buffers its records and, on flush, writes one Parquet file per Hive
  partition under a **deterministic name** built from the query id, the micro-batch id
  and the Spark partition — a replayed batch finds its files already there and keeps them;
- the driver registers all files of the micro-batch in the Iceberg catalog as **one
  snapshot** tagged with (query id, batch id) before Spark commits the batch; a replay
  whose batch a snapshot already records skips the commit. Files and catalog are therefore
  exactly-once, whatever the application's processing guarantee;
- per-key silence detection runs in the driver, fed with the keys every task saw (with
  their wall-clock time), so the tracker sees all keys of the topic at once.

Used outside Spark (``add``/``flush`` called directly) the sink writes and registers on
each flush with random file names, as the reference does.
"""

from __future__ import annotations

import io
import logging
import os
import time
import uuid
from itertools import islice
from typing import TYPE_CHECKING, Any, Callable, Iterator, Optional, Sequence

from ...engine.task_identity import TaskIdentity, current_task
from ...models.types import Headers
from ..base.sink import BaseSink, ClientConnectFailureCallback, ClientConnectSuccessCallback
from ._layout import TIME_COLUMNS, plain_schema, plan_files
from .catalog import LakeCatalog
from .storage import LakeStorage
from .timeout import StreamTimeoutTracker

if TYPE_CHECKING:
    from ...models.serializers.avro import ArrowAvroDecoder

__all__ = ("TSDataLakeSink",)

logger = logging.getLogger(__name__)

_DEFAULT_TARGET_FILE_SIZE = 128 * 1024 * 1024


class TSDataLakeSink(BaseSink):
    """Write dict records as Hive-partitioned Parquet and register the files in an Iceberg table.

    >>> sink = TSDataLakeSink(s3_prefix="/tmp/lake-doc", table_name="readings",
    ...                       hive_columns=["year", "month", "day"], timestamp_column="ts_ms")
    >>> sink.setup()
    >>> sink.add({"ts_ms": 1704067200000, "temp": 21.5}, b"sensor-a", 0, None, "t", 0, 0)
    >>> sink.flush()
    >>> sink.catalog.load_table().scan().to_arrow().num_rows >= 1
    True

    :param s3_prefix: the lake root: a local path (the default backend), ``s3://bucket/prefix``,
        ``gs://…`` or ``az://container/prefix``. Files go to ``<prefix>/<table_name>/<col>=<value>/…``.
    :param table_name: the table (directory and Iceberg table name).
    :param workspace_id: an optional path segment put between the bucket and the prefix.
    :param hive_columns: partition columns in path order; ``year``/``month``/``day``/``hour``
        come from ``timestamp_column`` (UTC), any other column from the record value.
    :param timestamp_column: the record's timestamp column (epoch s/ms/us/ns auto-detected,
        ISO strings and datetimes accepted); records without it get the Kafka timestamp (ms).
    :param catalog_url: Iceberg REST catalog URL, or a SQL catalog URI (``sqlite:///…``);
        ``None`` with local storage uses an embedded SQLite catalog under ``<prefix>/_catalog``;
        ``None`` with remote storage registers nothing.
    :param catalog_auth_token: bearer token for the REST catalog.
    :param auto_discover: create the table on first write (else it must exist).
    :param namespace: the catalog namespace.
    :param auto_create_bucket: create a missing bucket on start-up.
    :param stream_timeout_ms: per-key silence threshold in ms (see :class:`StreamTimeoutTracker`).
    :param on_stream_timeout: called with the raw key of each silent stream (in the driver).
    :param stream_timeout_durable: keep silence tracking across restarts: the tracker's table
        is saved in the application's checkpoint after every micro-batch and restored on start.
    :param storage_options: fsspec options for the storage (credentials, ``client_kwargs``…).
    :param catalog_properties: extra pyiceberg catalog properties (``credential``, ``warehouse``…).
    :param target_file_size: upper bound, in bytes of in-memory Arrow data, for one file.
    """

    collects_to_driver = True

    def __init__(
        self,
        s3_prefix: str,
        table_name: str,
        workspace_id: str = "",
        hive_columns: Optional[Sequence[str]] = None,
        timestamp_column: str = "ts_ms",
        catalog_url: Optional[str] = None,
        catalog_auth_token: Optional[str] = None,
        auto_discover: bool = True,
        namespace: str = "default",
        auto_create_bucket: bool = True,
        stream_timeout_ms: Optional[int] = None,
        on_stream_timeout: Optional[Callable[[Any], None]] = None,
        stream_timeout_durable: bool = False,
        storage_options: Optional[dict[str, Any]] = None,
        catalog_properties: Optional[dict[str, str]] = None,
        target_file_size: int = _DEFAULT_TARGET_FILE_SIZE,
        on_client_connect_success: Optional[ClientConnectSuccessCallback] = None,
        on_client_connect_failure: Optional[ClientConnectFailureCallback] = None,
    ) -> None:
        super().__init__(on_client_connect_success, on_client_connect_failure)
        if not table_name or "/" in table_name:
            raise ValueError(f"table_name must be a plain name, got {table_name!r}")
        self.hive_columns = list(hive_columns or [])
        if len(set(self.hive_columns)) != len(self.hive_columns):
            raise ValueError(f"hive_columns has duplicates: {self.hive_columns}")
        self.table_name = table_name
        self.timestamp_column = timestamp_column
        self.auto_discover = auto_discover
        self.auto_create_bucket = auto_create_bucket
        self.target_file_size = int(target_file_size)
        prefix = s3_prefix
        if workspace_id:
            scheme, sep, rest = s3_prefix.partition("://")
            if sep:
                bucket, _, path = rest.partition("/")
                prefix = f"{scheme}://{bucket}/{workspace_id}/{path}".rstrip("/")
            else:
                prefix = os.path.join(workspace_id, s3_prefix)
        self.storage = LakeStorage(prefix, storage_options)
        self.catalog = LakeCatalog(
            self.storage, table_name, self.hive_columns, catalog_url, catalog_auth_token, namespace, catalog_properties
        )
        self._timeout = StreamTimeoutTracker(
            stream_timeout_ms,
            on_stream_timeout,
            thread_name=f"streamspark-lake-{table_name}-timeout",
            logger=logger,
            clock_ms=self._clock_ms,
        )
        self.stream_timeout_durable = stream_timeout_durable
        # worker side
        self._rows: list[tuple[Any, Any, int]] = []
        #: raw chunks taken by ``add_raw_json`` / ``add_raw_avro`` (``_columnar.JsonChunk``); never
        #: beside ``_rows``
        self._chunks: list[Any] = []
        self._seen: set[Any] = set()
        self._written: list[dict[str, Any]] = []
        self._schema: Any = None
        #: this instance has written files (in a worker: a Spark task of this run flushed)
        self._flushed = False
        # driver side; ``_horizon_ms``: the time up to which the driver has seen every record
        # (None outside a streaming run: the tracker then uses the wall clock, like the reference)
        self._horizon_ms: Optional[int] = None
        self._streaming = False
        self._pending_seen: set[Any] = set()
        self._pending_files: list[dict[str, Any]] = []
        self._query_id: Optional[str] = None
        self._durable_path: Optional[str] = None

    # --- worker side -----------------------------------------------------------------------
    def setup(self) -> None:
        """Check the storage (create the bucket if allowed) and read the table's schema.

        In a Spark task of a streaming run the driver has already checked the catalog and
        shipped the table's schema with the sink, so the task does not connect to the catalog
        (nor import its client) here.
        """
        self.storage.check(create=self.auto_create_bucket)
        in_task = current_task() is not None
        if self.catalog.enabled and not (in_task and self._streaming):
            table = self.catalog.load_table()
            if table is not None:
                self.catalog.validate(table)
                self._schema = plain_schema(table.schema().as_arrow())
        self._validate_layout()
        if not in_task:
            self._timeout.start()  # standalone use and the driver; never in Spark workers

    def _validate_layout(self) -> None:
        """Refuse a table directory whose first partition level is another column."""
        dirs = [d for d in self.storage.list_dirs(self.table_name) if "=" in d]
        found = sorted({d.split("=", 1)[0] for d in dirs})
        expected = self.hive_columns[:1]
        if found and found != expected:
            raise ValueError(
                f"Partition layout mismatch under {self.storage.url(self.table_name)}: existing directories are "
                f"partitioned by {found}, the sink writes {self.hive_columns}"
            )

    def add(self, value: Any, key: Any, timestamp: int, headers: Headers, topic: str, partition: int, offset: int) -> None:
        if not isinstance(value, dict):
            raise TypeError(
                f"TSDataLakeSink accepts dict values only, got {type(value).__name__} "
                f"(topic={topic!r} partition={partition} offset={offset}); convert values with sdf.apply() first"
            )
        if self._chunks:  # chunks taken whole come first: keep the order
            self._rows.extend(self._chunk_rows())
            self._chunks = []
        self._rows.append((value, key, timestamp))
        if self._timeout.enabled:
            try:
                self._seen.add(key)
            except TypeError:
                pass  # unhashable keys are not tracked

    def add_raw_json(self, values: Sequence[bytes], keys: Sequence[Optional[bytes]], timestamps: Sequence[int]) -> bool:
        """Take a chunk of raw JSON values decoded at once by Arrow (see ``_columnar``): when
        the values are flat objects, the partitions all come from the timestamp and no record
        was added one by one before (the order is kept)."""
        from ._columnar import read_chunk

        return self._take_chunk(lambda: read_chunk(values, keys, timestamps, self.timestamp_column), keys)

    def add_raw_avro(
        self,
        values: Sequence[bytes],
        keys: Sequence[Optional[bytes]],
        timestamps: Sequence[int],
        decoder: ArrowAvroDecoder,
    ) -> bool:
        """Take a chunk of schemaless Avro values decoded at once into Arrow (see
        ``_columnar.read_avro_chunk``), under the conditions of :meth:`add_raw_json`."""
        from ._columnar import read_avro_chunk

        return self._take_chunk(lambda: read_avro_chunk(values, keys, timestamps, self.timestamp_column, decoder), keys)

    def _take_chunk(self, read: Callable[[], Any], keys: Sequence[Optional[bytes]]) -> bool:
        """Buffer the chunk ``read()`` decodes (None: it refuses the values); False when this
        sink takes no chunk now (rows added one by one come first, or a partition column is
        not a time column)."""
        if self._rows or any(col not in TIME_COLUMNS for col in self.hive_columns):
            return False
        chunk = read()
        if chunk is None:
            return False
        self._chunks.append(chunk)
        if self._timeout.enabled:
            self._seen.update(keys)
        return True

    def _chunk_rows(self, limit: Optional[int] = None) -> list[tuple[Any, Any, int]]:
        """The ``(value, key, timestamp)`` rows of the buffered chunks (the first ``limit``),
        decoded as the per-record path decodes them."""
        rows: Iterator[tuple[Any, Any, int]] = (row for chunk in self._chunks for row in chunk.rows())
        return list(islice(rows, limit))

    def flush(self) -> None:
        """Write the buffered rows (one file per Hive partition and size slice)."""
        rows, self._rows = self._rows, []
        task = current_task()
        identity = task if task is not None and task.streaming else None
        if not rows and not self._chunks:
            if identity is None:
                self._after_standalone_flush([])
            return
        started = time.monotonic()
        if self._schema is None and self.catalog.enabled and (identity is None or self._flushed):
            # the table did not exist when the query started. A task's first flush writes its
            # values' own types (the driver conforms the files to the table it creates or
            # finds); later flushes of this worker read the schema the driver registered.
            schema = self.catalog.arrow_schema()
            self._schema = plain_schema(schema) if schema is not None else None
        count = len(rows) + sum(len(chunk) for chunk in self._chunks)
        try:
            files = self._write(rows, identity)
        finally:
            self._chunks = []
        self._flushed = True
        logger.info(
            "Wrote %d row(s) in %d file(s) to %s in %.2fs",
            count,
            len(files),
            self.storage.url(self.table_name),
            time.monotonic() - started,
        )
        if identity is None:
            self._after_standalone_flush(files)
        else:
            self._written.extend(files)

    def _write(self, rows: list[tuple[Any, Any, int]], identity: Optional[TaskIdentity]) -> list[dict[str, Any]]:
        import pyarrow.parquet as pq

        sample_rows = rows[:100] if rows else self._chunk_rows(100)
        sample = plan_files(sample_rows, self.timestamp_column, self.hive_columns, self._schema)
        per_row = max(1, sum(p.table.nbytes for p in sample) // max(1, len(sample_rows)))
        max_rows = max(1, self.target_file_size // per_row)
        planned = None
        if self._chunks:
            from ._columnar import plan_chunks

            planned = plan_chunks(self._chunks, self.timestamp_column, self.hive_columns, self._schema, max_rows)
            if planned is None:  # a layout or a mix of types the chunk path leaves to the plain one
                rows = self._chunk_rows()
        if planned is None:
            planned = plan_files(rows, self.timestamp_column, self.hive_columns, self._schema, max_rows)
        if identity is not None:
            query = (identity.query_id or "-")[:8]
            stem = f"part-{identity.batch_id or 0:012d}-{query}-{identity.partition:05d}"
        else:
            stem = f"part-{uuid.uuid4().hex}"
        files = []
        slices: dict[tuple[str, ...], int] = {}
        for plan in planned:
            n = slices[plan.path_parts] = slices.get(plan.path_parts, -1) + 1
            relative = "/".join((self.table_name, *plan.path_parts, f"{stem}-{n:03d}.parquet"))
            if identity is None or not self.storage.exists(relative):
                buf = io.BytesIO()
                pq.write_table(plan.table, buf)
                self.storage.write_bytes(relative, buf.getvalue())
            else:
                logger.info("%s exists (a replay of batch %d): keeping it", relative, identity.batch_id)
            files.append({"path": relative, "schema": plan.table.schema, "rows": plan.table.num_rows})
        return files

    def on_paused(self) -> None:
        self._rows = []
        self._chunks = []
        self._written = []

    def drain_for_driver(self) -> Any:
        payload = {
            "files": self._written,
            "seen": self._seen,
            "query_id": task.query_id if (task := current_task()) is not None and task.streaming else None,
        }
        self._written, self._seen = [], set()
        return payload

    def _after_standalone_flush(self, files: list[dict[str, Any]]) -> None:
        """Outside Spark: register right away and run the silence check (the reference's flow)."""
        for key in self._seen:
            self._timeout.touch(key)
        self._seen = set()
        if files and self.catalog.enabled:
            self._register(files, f"standalone-{uuid.uuid4().hex}", 0)
            self._schema = None  # re-read: the commit may have created or evolved the table
        self._timeout.check_now()

    def _register(self, files: list[dict[str, Any]], query_id: str, batch_id: int) -> None:
        """One catalog snapshot for ``files``, rewriting first those whose column types differ from the table."""
        self.catalog.commit_files(
            [self.storage.url(f["path"]) for f in files],
            [f["schema"] for f in files],
            query_id=query_id,
            batch_id=batch_id,
            auto_discover=self.auto_discover,
            conform=lambda target: _conform_files(self, files, target),
        )

    def cleanup(self) -> None:
        """Stop the silence-check thread."""
        self._timeout.stop()

    # --- driver side -----------------------------------------------------------------------
    def _clock_ms(self) -> int:
        if not self._streaming:
            return time.time_ns() // 1_000_000
        # in a streaming run, silence is measured up to the point every record has been
        # seen: a long micro-batch in flight must not make its keys look silent
        return self._horizon_ms if self._horizon_ms is not None else -(2**62)

    def on_query_start(self, checkpoint_dir: Optional[str] = None) -> None:
        """Validate storage and catalog before the query starts; start silence detection."""
        self._streaming = True
        self._horizon_ms = None
        self.setup()
        if self.catalog.enabled:
            logger.info(
                "Lake sink: files under %s, registered in the %s", self.storage.url(self.table_name), self.catalog.describe()
            )
        if self._timeout.enabled:
            if self.stream_timeout_durable and checkpoint_dir:
                self._durable_path = os.path.join(checkpoint_dir, "sinks", f"{self.table_name}-silence.pickle")
                self._load_silence()
            self._timeout.start()

    def receive_from_worker(self, payload: Any) -> None:
        self._pending_files.extend(payload["files"])
        if payload.get("query_id"):
            self._query_id = payload["query_id"]
        self._pending_seen.update(payload["seen"])

    def on_batch_commit(self, batch_id: int, started_ms: int) -> None:
        """Register the batch's files as one snapshot (skipped when already registered)."""
        files, self._pending_files = self._pending_files, []
        if files and self.catalog.enabled:
            if self._query_id is None:
                raise RuntimeError("the lake sink got files without a streaming query id")
            self._register(files, self._query_id, batch_id)
        seen, self._pending_seen = self._pending_seen, set()
        for key in seen:
            self._timeout.touch(key, at_ms=started_ms)
        self._advance_horizon(started_ms)
        self._timeout.check_now()
        self._save_silence()

    def on_source_idle(self, caught_up_ms: int) -> None:
        self._advance_horizon(caught_up_ms)

    def _advance_horizon(self, to_ms: int) -> None:
        """Move the silence clock forward in steps of at most one threshold, checking at each,
        so a jump (a micro-batch interval longer than the threshold) fires silent keys instead
        of letting them pass the 3x safety TTL unseen."""
        if self._horizon_ms is None or not self._timeout.enabled:
            self._horizon_ms = max(self._horizon_ms or to_ms, to_ms)
            return
        step = self._timeout.stream_timeout_ms
        while self._horizon_ms < to_ms:
            self._horizon_ms = min(to_ms, self._horizon_ms + step)
            self._timeout.check_now()

    def on_batch_abort(self) -> None:
        """The batch failed: forget what its tasks reported."""
        self._pending_files = []
        self._pending_seen = set()

    def on_query_stop(self) -> None:
        self._timeout.stop()
        self._save_silence()
        self._streaming = False

    # --- durable silence -------------------------------------------------------------------
    def _load_silence(self) -> None:
        import pickle

        path = self._durable_path
        if path is None or not os.path.exists(path):
            return
        with open(path, "rb") as f:
            saved = pickle.load(f)
        self._timeout.restore(saved["last_seen"])
        logger.info("Restored silence tracking of %d stream(s) from %s", len(saved["last_seen"]), path)

    def _save_silence(self) -> None:
        import pickle

        path = self._durable_path
        if path is None:
            return
        os.makedirs(os.path.dirname(path), exist_ok=True)
        tmp = f"{path}.tmp"
        with open(tmp, "wb") as f:
            pickle.dump({"last_seen": self._timeout.snapshot(), "saved_at_ms": time.time_ns() // 1_000_000}, f)
        os.replace(tmp, path)

    # --- maintenance -----------------------------------------------------------------------
    def compact(self, min_age_ms: int = 3_600_000, min_files: int = 2) -> dict[str, int]:
        """Rewrite the small files of closed partitions into one file per partition.

        See :func:`streamspark.sinks.datalake.compact`.
        """
        from .compaction import compact

        return compact(self.catalog, target_file_size=self.target_file_size, min_age_ms=min_age_ms, min_files=min_files)

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state["_rows"], state["_written"], state["_seen"], state["_pending_files"] = [], [], set(), []
        state["_chunks"] = []
        state["_pending_seen"] = set()
        state["_flushed"] = False
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._timeout.clock_ms = self._clock_ms

    def __repr__(self) -> str:
        return f"TSDataLakeSink({self.storage.url(self.table_name)!r}, hive_columns={self.hive_columns})"


def _conform_files(sink: TSDataLakeSink, files: list[dict[str, Any]], target: Any) -> None:
    """Rewrite files whose column types disagree with the table's ``target`` schema (e.g. ints in a double column)."""
    import pyarrow.parquet as pq

    from ._layout import conform_table

    for f in files:
        schema = f["schema"]
        if all(target.get_field_index(fl.name) < 0 or target.field(fl.name).type == fl.type for fl in schema):
            continue
        data = pq.read_table(io.BytesIO(sink.storage.read_bytes(f["path"])))
        fixed = conform_table(data, target)
        buf = io.BytesIO()
        pq.write_table(fixed, buf)
        sink.storage.write_bytes(f["path"], buf.getvalue())
        f["schema"] = fixed.schema
        logger.info("Rewrote %s with the table's column types", f["path"])
