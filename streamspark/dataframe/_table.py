"""The table printer behind ``sdf.print_table``.

Rows are dicts; with ``metadata`` they start with ``_key`` and ``_timestamp``, and a value that
is not a dict goes to the column ``"0"``. Columns appear in the order they are first seen
unless ``columns`` fixes them; a missing value is an empty cell.

>>> table = TablePrinter(size=1, title="T", settings=LiveSettings(live=False))
>>> table.add({"a": 1}, b"k", 5, None)
T
┏━━━━━━┳━━━━━━━━━━━━┳━━━┓
┃ _key ┃ _timestamp ┃ a ┃
┡━━━━━━╇━━━━━━━━━━━━╇━━━┩
│ b'k' │ 5          │ 1 │
└──────┴────────────┴───┘
"""

from __future__ import annotations

import sys
import time
from collections import deque
from typing import Any, Optional

__all__ = ("TablePrinter", "LiveSettings", "DEFAULT_COLUMN_NAME", "DEFAULT_LIVE", "DEFAULT_LIVE_SLOWDOWN")

#: the column of a value that is not a dict
DEFAULT_COLUMN_NAME = "0"
DEFAULT_LIVE = True
DEFAULT_LIVE_SLOWDOWN = 0.5

_CLEAR_SCREEN = "\x1b[2J\x1b[H"


class LiveSettings:
    """``live`` and ``live_slowdown`` shared by the tables of one pipeline: the last value that
    differs from the default wins, for every table."""

    def __init__(self, live: bool = DEFAULT_LIVE, live_slowdown: float = DEFAULT_LIVE_SLOWDOWN) -> None:
        self.live = live
        self.live_slowdown = live_slowdown
        self.tables: list["TablePrinter"] = []

    def configure(self, live: bool, live_slowdown: float) -> None:
        if live != DEFAULT_LIVE:
            self.live = live
        if live_slowdown != DEFAULT_LIVE_SLOWDOWN:
            self.live_slowdown = max(0.0, live_slowdown)

    def interactive(self) -> bool:
        """Refresh in place: ``live`` and stdout is a terminal."""
        isatty = getattr(sys.stdout, "isatty", None)
        return bool(self.live and isatty is not None and isatty())


class TablePrinter:
    """Keeps the last ``size`` rows of a table and prints them.

    In a terminal (with ``live``) every new row reprints the tables of the pipeline in place,
    then waits ``live_slowdown`` seconds. Elsewhere (output redirected, Spark workers) the table
    is printed once it is full or ``timeout`` seconds after the last print, then starts empty.
    """

    def __init__(
        self,
        size: int = 5,
        title: Optional[str] = None,
        metadata: bool = True,
        timeout: float = 5.0,
        columns: Optional[list[str]] = None,
        column_widths: Optional[dict[str, int]] = None,
        settings: Optional[LiveSettings] = None,
    ) -> None:
        self.title = title
        self.metadata = metadata
        self.timeout = timeout
        self.column_widths = column_widths or {}
        self.settings = settings if settings is not None else LiveSettings()
        self.settings.tables.append(self)
        self._rows: deque[dict[str, Any]] = deque(maxlen=size)
        self._auto_columns = columns is None
        self._columns: list[Any] = list(columns or [])
        self._start = time.monotonic()

    def add(self, value: Any, key: Any, timestamp: int, headers: Any) -> None:
        """Add a record's row and print as the mode requires."""
        if not isinstance(value, dict):
            value = {DEFAULT_COLUMN_NAME: value}
        if self.metadata:
            value = {"_key": key, "_timestamp": timestamp, **value}
        if self._auto_columns:
            self._columns.extend(c for c in value if c not in self._columns)
        self._rows.append({c: value.get(c, "") for c in self._columns})
        if self.settings.interactive():
            out = [_CLEAR_SCREEN] + [t.render() for t in self.settings.tables if t._rows]  # noqa: SLF001
            print("\n".join(out), file=sys.stdout, flush=True)
            time.sleep(self.settings.live_slowdown)
        elif len(self._rows) >= (self._rows.maxlen or 0) or time.monotonic() - self._start > self.timeout:
            self.flush()

    def render(self) -> str:
        """The table as text (box-drawing characters)."""
        cols = [str(c) for c in self._columns]
        cells = [[str(row.get(c, "")) for c in self._columns] for row in self._rows]
        widths = []
        for i, name in enumerate(cols):
            fixed = self.column_widths.get(name)
            widths.append(fixed if fixed else max([len(name)] + [len(r[i]) for r in cells]))

        def fit(text: str, width: int) -> str:
            return text if len(text) <= width else text[: max(width - 1, 0)] + "…"

        def line(left: str, fill: str, middle: str, right: str) -> str:
            return left + middle.join(fill * (w + 2) for w in widths) + right

        def row(sep: str, texts: list[str]) -> str:
            return sep + sep.join(f" {fit(text, w):<{w}} " for text, w in zip(texts, widths)) + sep

        out = [self.title] if self.title else []
        if not cols:
            return "\n".join(out)
        out += [line("┏", "━", "┳", "┓"), row("┃", cols), line("┡", "━", "╇", "┩")]
        out += [row("│", r) for r in cells]
        out.append(line("└", "─", "┴", "┘"))
        return "\n".join(out)

    def flush(self) -> None:
        """Print the rows collected so far (if any) and start an empty table."""
        if self._rows:
            print(self.render(), file=sys.stdout, flush=True)
            self._rows.clear()
        self._start = time.monotonic()
