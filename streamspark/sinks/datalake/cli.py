"""``streamspark-lake``: maintenance of a lake written by ``TSDataLakeSink``.

Example::

    streamspark-lake compact --prefix ./data-lake --table sensor_readings --hive-columns year,month,day
    streamspark-lake compact --prefix s3://lake/ts --table readings --catalog-url http://127.0.0.1:8181 \\
        --storage-option key=... --storage-option secret=... --catalog-property credential=key:secret
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from typing import Optional, Sequence

from .catalog import LakeCatalog
from .compaction import compact
from .storage import LakeStorage

__all__ = ("main",)


def _pairs(items: Optional[list[str]]) -> dict[str, str]:
    out = {}
    for item in items or []:
        name, sep, value = item.partition("=")
        if not sep:
            raise SystemExit(f"expected NAME=VALUE, got {item!r}")
        out[name] = value
    return out


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="streamspark-lake", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    c = sub.add_parser("compact", help="rewrite small files of closed partitions into large ones")
    c.add_argument("--prefix", required=True, help="the sink's s3_prefix (path or URL)")
    c.add_argument("--table", required=True, help="the sink's table_name")
    c.add_argument("--hive-columns", default="", help="comma-separated, as given to the sink")
    c.add_argument("--catalog-url", default=None)
    c.add_argument("--catalog-auth-token", default=None)
    c.add_argument("--namespace", default="default")
    c.add_argument("--storage-option", action="append", help="fsspec option NAME=VALUE (repeatable)")
    c.add_argument("--catalog-property", action="append", help="pyiceberg property NAME=VALUE (repeatable)")
    c.add_argument("--min-age-ms", type=int, default=3_600_000)
    c.add_argument("--min-files", type=int, default=2)
    c.add_argument("--target-file-size", type=int, default=128 * 1024 * 1024)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    storage = LakeStorage(args.prefix, _pairs(args.storage_option) or None)
    hive = [c for c in args.hive_columns.split(",") if c]
    catalog = LakeCatalog(
        storage, args.table, hive, args.catalog_url, args.catalog_auth_token, args.namespace, _pairs(args.catalog_property)
    )
    if not catalog.enabled:
        print("no catalog: pass --catalog-url for remote storage", file=sys.stderr)
        return 2
    result = compact(catalog, target_file_size=args.target_file_size, min_age_ms=args.min_age_ms, min_files=args.min_files)
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
