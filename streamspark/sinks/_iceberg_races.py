"""Opening one Iceberg catalog from several tasks at once (the Iceberg and data lake sinks).

Two races, both seen in the test suite once task workers started with the session:

- pyiceberg's SQL catalog creates its own tables (``iceberg_tables``, ...) on first open: it
  checks, then creates. Two tasks opening a fresh catalog at the same moment can both pass the
  check; the second ``CREATE TABLE`` fails with ``OperationalError: table ... already exists``.
- ``create_namespace_if_not_exists`` checks, then inserts; the second insert fails with a
  database error (``IntegrityError``), not ``NamespaceAlreadyExistsError``.

Losing either race is fine: what the other task created is what we wanted.

>>> from pyiceberg.catalog import load_catalog
>>> catalog = open_catalog(lambda: load_catalog("lake", type="sql", uri="sqlite:///c.db", warehouse="file:///tmp/w"))
>>> ensure_namespace(catalog, "events")
"""

from __future__ import annotations

import time
from typing import Any, Callable, TypeVar

__all__ = ("ensure_namespace", "open_catalog")

T = TypeVar("T")

_OPEN_ATTEMPTS = 3


def _lost_creation_race(exc: BaseException) -> bool:
    text = str(exc).lower()
    return "already exists" in text or "duplicate" in text or "unique constraint" in text


def open_catalog(load: Callable[[], T]) -> T:
    """``load()`` the catalog, again when it failed because another task created its tables first.

    Any other failure (an unreachable catalog, bad properties) is raised at once.
    """
    for attempt in range(_OPEN_ATTEMPTS):
        try:
            return load()
        except Exception as exc:
            if attempt == _OPEN_ATTEMPTS - 1 or not _lost_creation_race(exc):
                raise
            time.sleep(0.05 * (attempt + 1))  # the winner's CREATE commits within moments
    raise AssertionError("unreachable")  # pragma: no cover - the loop returns or raises


def ensure_namespace(catalog: Any, namespace: str) -> None:
    """Create ``namespace`` in ``catalog`` unless it exists; losing a race to create it is fine.

    Any other failure is raised as it is.
    """
    try:
        catalog.create_namespace_if_not_exists(namespace)
    except Exception:
        try:
            exists = catalog.namespace_exists(namespace)
        except Exception:
            exists = False
        if not exists:
            raise
