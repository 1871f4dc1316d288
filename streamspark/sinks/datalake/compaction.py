"""Lake maintenance: rewrite the small files of closed partitions into large ones.

A streaming sink writes at least one file per Hive partition per micro-batch. ``compact``
merges the files of each *closed* partition (its time range ended at least ``min_age_ms``
ago) into files of up to ``target_file_size`` and swaps them in **one catalog snapshot**
(an Iceberg overwrite), so readers through the catalog never see a partial state. The
replaced files are then deleted from storage, so Hive-style readers (DuckDB over
``**/*.parquet``) see each row once again; older snapshots that referenced them can no
longer be read (time travel before a compaction is given up).

>>> from streamspark.sinks.datalake import TSDataLakeSink
>>> sink = TSDataLakeSink("/tmp/lake-doc-compact", "t", hive_columns=["year"])
>>> compact(sink.catalog)["partitions"]
0

From the shell: ``streamspark-lake compact --prefix /data/lake --table sensor_readings``.
"""

from __future__ import annotations

import calendar
import datetime as dt
import io
import logging
import time
from typing import Any, Optional

import pyarrow as pa

from ._layout import conform_table, plain_schema
from .catalog import LakeCatalog

__all__ = ("compact",)

logger = logging.getLogger(__name__)

COMPACTION_PROPERTY = "streamspark.compaction"


def _period_end_ms(values: dict[str, Any]) -> Optional[int]:
    """End of the time range of a partition from its year/month/day/hour values (None: no time columns)."""
    year = values.get("year")
    if year is None:
        return None
    try:
        y = int(year)
        month = values.get("month")
        day = values.get("day")
        hour = values.get("hour")
        if month is None:
            end = dt.datetime(y + 1, 1, 1, tzinfo=dt.timezone.utc)
        elif day is None:
            m = int(month)
            end = dt.datetime(y + (m == 12), m % 12 + 1, 1, tzinfo=dt.timezone.utc)
        else:
            start = dt.datetime(y, int(month), int(day), int(hour or 0), tzinfo=dt.timezone.utc)
            end = start + (dt.timedelta(hours=1) if hour is not None else dt.timedelta(days=1))
    except (TypeError, ValueError):
        return None
    return calendar.timegm(end.utctimetuple()) * 1000


def compact(
    catalog: LakeCatalog,
    target_file_size: int = 128 * 1024 * 1024,
    min_age_ms: int = 3_600_000,
    min_files: int = 2,
    now_ms: Optional[int] = None,
) -> dict[str, int]:
    """Compact the closed partitions of ``catalog``'s table; return counts of what was done.

    :param target_file_size: the largest file to write, in bytes of in-memory Arrow data.
    :param min_age_ms: a partition is closed when its time range (from the ``year``/``month``/
        ``day``/``hour`` hive columns) ended at least this long ago; partitions without time
        columns are always eligible.
    :param min_files: only partitions with at least this many files are rewritten.
    :returns: ``{"partitions": n, "files_removed": n, "files_written": n, "rows": n}``
    """
    import pyarrow.parquet as pq
    from pyiceberg.io.pyarrow import parquet_file_to_data_file

    now = now_ms if now_ms is not None else time.time_ns() // 1_000_000
    result = {"partitions": 0, "files_removed": 0, "files_written": 0, "rows": 0}
    table = catalog.load_table()
    if table is None or table.current_snapshot() is None:
        return result
    storage = catalog.storage
    _finish_previous(table, storage)
    spec_names = catalog.partition_columns(table)
    groups: dict[tuple[Any, ...], list[Any]] = {}
    for task in table.scan().plan_files():
        data_file = task.file
        key = tuple(data_file.partition[i] for i in range(len(spec_names)))
        groups.setdefault(key, []).append(data_file)
    snapshot_id = table.current_snapshot().snapshot_id
    target_schema = plain_schema(table.schema().as_arrow())
    for key, files in sorted(groups.items(), key=lambda kv: str(kv[0])):
        values = dict(zip(spec_names, key))
        end = _period_end_ms(values)
        if len(files) < min_files or (end is not None and end + min_age_ms > now):
            continue
        paths = [_relative(storage, f.file_path) for f in files]
        tables = [conform_table(pq.read_table(io.BytesIO(storage.read_bytes(p))), target_schema) for p in paths]
        merged = pa.concat_tables(tables, promote_options="permissive")
        per_row = max(1, merged.nbytes // max(1, merged.num_rows))
        step = max(1, target_file_size // per_row)
        directory = paths[0].rsplit("/", 1)[0]
        new_paths = []
        for n, start in enumerate(range(0, merged.num_rows, step)):
            relative = f"{directory}/compact-{snapshot_id}-{n:03d}.parquet"
            buf = io.BytesIO()
            pq.write_table(merged.slice(start, step), buf)
            storage.write_bytes(relative, buf.getvalue())
            new_paths.append(relative)
        with table.transaction() as tx:
            with tx.update_snapshot(snapshot_properties={COMPACTION_PROPERTY: str(snapshot_id)}).overwrite() as ow:
                for f in files:
                    ow.delete_data_file(f)
                for relative in new_paths:
                    ow.append_data_file(parquet_file_to_data_file(table.io, tx.table_metadata, storage.url(relative)))
        table = table.refresh()
        for p in paths:
            storage.delete(p)
        logger.info("Compacted %s: %d file(s) -> %d (%d rows)", directory, len(files), len(new_paths), merged.num_rows)
        result["partitions"] += 1
        result["files_removed"] += len(files)
        result["files_written"] += len(new_paths)
        result["rows"] += merged.num_rows
    return result


def _relative(storage: Any, url: str) -> str:
    path = url.split("://", 1)[1] if "://" in url else url
    root = storage.root.rstrip("/") + "/"
    if not path.startswith(root):
        raise ValueError(f"{url} is outside the lake root {storage.url('')}")
    return path[len(root) :]


def _finish_previous(table: Any, storage: Any) -> None:
    """Delete what the last compaction replaced, in case it stopped between its commit and its deletes."""
    from pyiceberg.manifest import ManifestEntryStatus

    for snapshot in reversed(table.metadata.snapshots):
        props = snapshot.summary.additional_properties if snapshot.summary is not None else {}
        if COMPACTION_PROPERTY not in props:
            continue
        for manifest in snapshot.manifests(table.io):
            for entry in manifest.fetch_manifest_entry(table.io, discard_deleted=False):
                if entry.status == ManifestEntryStatus.DELETED and entry.snapshot_id == snapshot.snapshot_id:
                    relative = _relative(storage, entry.data_file.file_path)
                    if storage.exists(relative):
                        logger.info("Removing %s, replaced by an earlier compaction", relative)
                        storage.delete(relative)
        return
