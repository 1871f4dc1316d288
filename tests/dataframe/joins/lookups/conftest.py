"""A small SQLite database of devices for the lookup tests."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

DEVICES = [
    ("d1", "m1", "s1", 1),
    ("d1", "m1-old", "s0", 0),
    ("d2", "m2", "s2", 5),
]


def make_devices_db(path: Path) -> str:
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE devices (id TEXT, model TEXT, site TEXT, since INTEGER)")
    conn.executemany("INSERT INTO devices VALUES (?, ?, ?, ?)", DEVICES)
    conn.commit()
    conn.close()
    return str(path)


@pytest.fixture
def devices_db(tmp_path: Path) -> str:
    return make_devices_db(tmp_path / "devices.db")
