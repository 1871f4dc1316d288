"""The join cases shared by the ``sdf.test()`` tables and the Spark end-to-end test.

A case is a join configuration and a list of events ``(phase, side, value, key, timestamp)``
with the outputs ``(value, key, timestamp)`` it must give, in order. Within a phase the events
are listed in the order a time-aligned consumer hands them out (timestamp order; on equal
timestamps the left topic, defined first, comes first), so the in-process run and Spark's
agree; a later phase arrives after the earlier one was processed (late records).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

L, R = "left", "right"


def pair(left: Any, right: Any) -> dict[str, Any]:
    """A custom merger (module level: Spark pickles it)."""
    return {"l": left, "r": right}


#: join configuration name -> (method, keyword arguments)
CONFIGS: dict[str, tuple[str, dict[str, Any]]] = {
    "asof-inner": ("join_asof", {"how": "inner", "on_merge": "keep-left"}),
    "asof-left-grace": ("join_asof", {"how": "left", "on_merge": "keep-left", "grace_ms": 100}),
    "asof-keep-right": ("join_asof", {"how": "inner", "on_merge": "keep-right"}),
    "asof-callable": ("join_asof", {"how": "left", "on_merge": pair}),
    "interval-equal": ("join_interval", {"how": "inner", "on_merge": "keep-left"}),
    "interval-outer": (
        "join_interval",
        {"how": "outer", "on_merge": "keep-left", "grace_ms": 1000, "backward_ms": 50, "forward_ms": 10},
    ),
    "interval-left": ("join_interval", {"how": "left", "on_merge": pair, "backward_ms": 100}),
    "interval-right": ("join_interval", {"how": "right", "on_merge": pair, "forward_ms": 100}),
    "interval-grace": (
        "join_interval",
        {"how": "inner", "on_merge": "keep-left", "grace_ms": 100, "backward_ms": 100, "forward_ms": 20},
    ),
}


@dataclass
class Case:
    id: str
    config: str
    events: list[tuple[int, str, Any, Optional[bytes], int]]
    expected: list[tuple[Any, Optional[bytes], int]] = field(default_factory=list)


CASES = [
    # --- as-of ------------------------------------------------------------------------------
    Case(
        "asof inner: no match before the first right record",
        "asof-inner",
        [(1, L, {"t": 1}, b"k", 10), (1, R, {"m": "a"}, b"k", 20), (1, L, {"t": 2}, b"k", 30)],
        [({"m": "a", "t": 2}, b"k", 30)],
    ),
    Case(
        "asof: the latest right record at or before the left one",
        "asof-inner",
        [(1, R, {"m": "a"}, b"k", 10), (1, L, {"t": 1}, b"k", 15), (1, R, {"m": "b"}, b"k", 20), (1, L, {"t": 2}, b"k", 25)],
        [({"m": "a", "t": 1}, b"k", 15), ({"m": "b", "t": 2}, b"k", 25)],
    ),
    Case(
        "asof: equal timestamps, left first, sees the older right record",
        "asof-inner",
        [(1, R, {"m": "a"}, b"k", 10), (1, L, {"t": 1}, b"k", 20), (1, R, {"m": "b"}, b"k", 20)],
        [({"m": "a", "t": 1}, b"k", 20)],
    ),
    Case(
        "asof: equal timestamps, right stored first, matches",
        "asof-inner",
        [(1, R, {"m": "a"}, b"k", 20), (2, L, {"t": 1}, b"k", 20)],
        [({"m": "a", "t": 1}, b"k", 20)],
    ),
    Case(
        "asof: a right record at a timestamp already stored replaces it",
        "asof-inner",
        [(1, R, {"m": "a"}, b"k", 10), (2, R, {"m": "b"}, b"k", 10), (3, L, {"t": 1}, b"k", 15)],
        [({"m": "b", "t": 1}, b"k", 15)],
    ),
    Case("asof: keys do not meet", "asof-inner", [(1, R, {"m": "a"}, b"k1", 10), (1, L, {"t": 1}, b"k2", 20)], []),
    Case("asof inner: an empty right value is no match", "asof-inner", [(1, R, {}, b"k", 10), (1, L, {"t": 1}, b"k", 20)], []),
    Case(
        "asof: None keys join each other",
        "asof-inner",
        [(1, R, {"m": "n"}, None, 10), (1, L, {"t": 1}, None, 20)],
        [({"m": "n", "t": 1}, None, 20)],
    ),
    Case("asof left: emits without a match", "asof-left-grace", [(1, L, {"t": 1}, b"k", 10)], [({"t": 1}, b"k", 10)]),
    Case(
        "asof left: a late left record misses a right record expired by the grace period",
        "asof-left-grace",
        [(1, R, {"m": "a"}, b"k", 10), (1, R, {"m": "b"}, b"k", 200), (2, L, {"t": 1}, b"k", 50), (2, L, {"t": 2}, b"k", 250)],
        [({"t": 1}, b"k", 50), ({"m": "b", "t": 2}, b"k", 250)],
    ),
    Case(
        "asof left: a right record within the grace period still matches a late left record",
        "asof-left-grace",
        [(1, R, {"m": "a"}, b"k", 10), (1, R, {"m": "b"}, b"k", 100), (2, L, {"t": 1}, b"k", 50)],
        [({"m": "a", "t": 1}, b"k", 50)],
    ),
    Case(
        "asof keep-right: the right value wins",
        "asof-keep-right",
        [(1, R, {"v": "r", "m": 1}, b"k", 10), (1, L, {"v": "l"}, b"k", 20)],
        [({"v": "r", "m": 1}, b"k", 20)],
    ),
    Case(
        "asof callable merger: both records, None without a match",
        "asof-callable",
        [(1, L, {"t": 1}, b"k", 10), (1, R, {"m": "a"}, b"k", 20), (1, L, {"t": 2}, b"k", 30)],
        [({"l": {"t": 1}, "r": None}, b"k", 10), ({"l": {"t": 2}, "r": {"m": "a"}}, b"k", 30)],
    ),
    # --- interval ---------------------------------------------------------------------------
    Case(
        "interval 0/0: only equal timestamps match, emitted by the later record",
        "interval-equal",
        [(1, L, {"t": 1}, b"k", 10), (1, R, {"m": "a"}, b"k", 10), (1, R, {"m": "b"}, b"k", 11)],
        [({"m": "a", "t": 1}, b"k", 10)],
    ),
    Case(
        "interval outer: unmatched records of both sides, pairs within the interval",
        "interval-outer",
        [(1, R, {"m": "a"}, b"k", 100), (1, L, {"t": 1}, b"k", 120), (1, L, {"t": 2}, b"k", 200), (1, R, {"m": "b"}, b"k", 205)],
        [({"m": "a"}, b"k", 100), ({"m": "a", "t": 1}, b"k", 120), ({"t": 2}, b"k", 200), ({"m": "b", "t": 2}, b"k", 205)],
    ),
    Case(
        "interval outer: a left record pairs with every right record in its interval",
        "interval-outer",
        [(1, R, {"m": "a"}, b"k", 100), (1, R, {"n": "b"}, b"k", 110), (1, L, {"t": 1}, b"k", 140)],
        [({"m": "a"}, b"k", 100), ({"n": "b"}, b"k", 110), ({"m": "a", "t": 1}, b"k", 140), ({"n": "b", "t": 1}, b"k", 140)],
    ),
    Case(
        "interval outer: a right record pairs with every left record within forward_ms",
        "interval-outer",
        [(1, L, {"t": 1}, b"k", 100), (1, L, {"t": 2}, b"k", 105), (1, R, {"m": "a"}, b"k", 108)],
        [({"t": 1}, b"k", 100), ({"t": 2}, b"k", 105), ({"m": "a", "t": 1}, b"k", 108), ({"m": "a", "t": 2}, b"k", 108)],
    ),
    Case(
        "interval left: unmatched left records emit, unmatched right records do not",
        "interval-left",
        [(1, L, {"t": 1}, b"k", 10), (1, R, {"m": "a"}, b"k", 50), (1, L, {"t": 2}, b"k", 120)],
        [({"l": {"t": 1}, "r": None}, b"k", 10), ({"l": {"t": 2}, "r": {"m": "a"}}, b"k", 120)],
    ),
    Case(
        "interval right: unmatched right records emit, unmatched left records do not",
        "interval-right",
        [(1, R, {"m": "a"}, b"k", 10), (1, L, {"t": 1}, b"k", 50), (1, R, {"m": "b"}, b"k", 120)],
        [({"l": None, "r": {"m": "a"}}, b"k", 10), ({"l": {"t": 1}, "r": {"m": "b"}}, b"k", 120)],
    ),
    Case(
        "interval: a late right record does not look forward to an earlier-processed left one",
        "interval-grace",
        [(1, L, {"t": 1}, b"k", 100), (2, R, {"m": "a"}, b"k", 90), (2, R, {"m": "b"}, b"k", 110)],
        [({"m": "b", "t": 1}, b"k", 110)],
    ),
    Case(
        "interval: right records expire by the grace period",
        "interval-grace",
        [(1, R, {"m": "a"}, b"k", 10), (1, R, {"m": "b"}, b"k", 300), (2, L, {"t": 1}, b"k", 60), (2, L, {"t": 2}, b"k", 350)],
        [({"m": "b", "t": 2}, b"k", 350)],
    ),
    Case(
        "interval: None keys join each other",
        "interval-equal",
        [(1, L, {"t": 1}, None, 10), (1, R, {"m": "n"}, None, 10)],
        [({"m": "n", "t": 1}, None, 10)],
    ),
]


def build(left: Any, right: Any, config: str) -> Any:
    """The joined dataframe of ``config`` (stores named after it, so configs can share dataframes)."""
    method, kwargs = CONFIGS[config]
    return getattr(left, method)(right, name=config, **kwargs)
