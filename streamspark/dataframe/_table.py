"""A plain-text table printer for ``sdf.print_table``."""

from __future__ import annotations

import sys
import time
from typing import Any, Optional

__all__ = ("TablePrinter",)


class TablePrinter:
    """Collects records and prints them as a fixed-width table when full or after ``timeout``."""

    def __init__(
        self,
        size: int = 5,
        title: Optional[str] = None,
        metadata: bool = True,
        timeout: float = 5.0,
        columns: Optional[list[str]] = None,
        column_widths: Optional[dict[str, int]] = None,
    ) -> None:
        self.size = size
        self.title = title
        self.metadata = metadata
        self.timeout = timeout
        self.columns = columns
        self.column_widths = column_widths or {}
        self._rows: list[dict[str, Any]] = []
        self._started = 0.0

    def add(self, value: Any, key: Any, timestamp: int, headers: Any) -> None:
        row: dict[str, Any] = {}
        if self.metadata:
            row["_key"] = key
            row["_timestamp"] = timestamp
        if isinstance(value, dict):
            row.update(value if self.columns is None else {c: value.get(c) for c in self.columns})
        elif self.columns is None or self.columns:
            row["_value"] = value
        if not self._rows:
            self._started = time.monotonic()
        self._rows.append(row)
        if len(self._rows) >= self.size or time.monotonic() - self._started >= self.timeout:
            self.flush()

    def render(self) -> str:
        cols: list[str] = []
        for row in self._rows:
            for c in row:
                if c not in cols:
                    cols.append(c)
        widths = {c: self.column_widths.get(c, max([len(c)] + [len(str(r.get(c, ""))) for r in self._rows])) for c in cols}
        line = "+" + "+".join("-" * (widths[c] + 2) for c in cols) + "+"
        out = [self.title] if self.title else []
        out.append(line)
        out.append("|" + "|".join(f" {c:<{widths[c]}} " for c in cols) + "|")
        out.append(line)
        for r in self._rows:
            out.append("|" + "|".join(f" {str(r.get(c, ''))[:widths[c]]:<{widths[c]}} " for c in cols) + "|")
        out.append(line)
        return "\n".join(out)

    def flush(self) -> None:
        if self._rows:
            print(self.render(), file=sys.stdout, flush=True)
            self._rows = []
