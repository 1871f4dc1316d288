"""The package type-checks (mypy) — the core promises type hints everywhere."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def test_mypy_is_clean():
    root = Path(__file__).parents[1]
    proc = subprocess.run([sys.executable, "-m", "mypy", "streamspark"], cwd=root, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
