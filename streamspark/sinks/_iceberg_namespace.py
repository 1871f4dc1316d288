"""Creating an Iceberg namespace from several tasks at once (the Iceberg and data lake sinks).

pyiceberg's ``create_namespace_if_not_exists`` checks, then inserts. Two Spark tasks that start
the same sink at the same moment can both pass the check; the SQL catalog then fails the
second insert with a database error (``IntegrityError``), not ``NamespaceAlreadyExistsError``.
We hit this in the test suite once the task workers were started with the session.
"""

from __future__ import annotations

from typing import Any

__all__ = ("ensure_namespace",)


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
