"""Delivery tokens: what lets a sink recognise a micro-batch it already wrote.

Spark replays a failed micro-batch with the same offsets, and the same records reach the
same task (the unit: a source partition, or a key bucket of a stateful pipeline). A sink that
can commit a token atomically with its data (a database transaction, an Iceberg snapshot
property) stores ``delivery_token()`` with each write and skips a write whose token is
already there: exactly-once delivery even though Spark runs the batch again.
"""

from __future__ import annotations

import importlib
from contextvars import ContextVar
from typing import Any, Optional

from ...engine.task_identity import current_task

__all__ = ("delivery_token", "set_delivery_unit", "import_optional")

_unit: ContextVar[Optional[str]] = ContextVar("streamspark_delivery_unit", default=None)


def set_delivery_unit(unit: Optional[str]) -> None:
    """Called by the engine before it flushes a task's sinks (``"all-3"``, ``"post-17"``, ...)."""
    _unit.set(unit)


def delivery_token(node: Optional[int]) -> Optional[str]:
    """``<query id>/<batch id>/<unit>/<sink node>`` of the flush in progress, or None outside a
    streaming micro-batch (``sdf.test``, a sink used on its own)."""
    unit = _unit.get()
    if unit is None:
        return None
    task = current_task()
    if task is None or task.batch_id is None:
        return None
    query, batch = task.query_id or "-", task.batch_id
    return f"{query}/{batch}/{unit}/{node if node is not None else '-'}"


def import_optional(module: str, sink: str, extra: str) -> Any:
    """Import a sink's client library, or fail naming the extra that installs it.

    >>> import_optional("json", "MySink", "json").dumps(1)
    '1'
    >>> import_optional("no_such_client_lib", "MySink", "mysink")
    Traceback (most recent call last):
    ...
    ImportError: MySink needs the 'no_such_client_lib' package: pip install "streamspark[mysink]"
    """
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ImportError(f'{sink} needs the {module.split(".")[0]!r} package: pip install "streamspark[{extra}]"') from exc
