"""The README's demo command: the whole Kafka → Spark → lake pipeline with its silence alert."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def test_demo_runs_end_to_end(tmp_path):
    out = subprocess.run(
        [sys.executable, "-m", "streamspark.demo", "--seconds", "6", "--output-dir", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=400,
        cwd=str(Path(__file__).parents[1]),
    )
    text = out.stdout + out.stderr
    assert out.returncode == 0, text[-4000:]
    assert "silence alerts: ['sensor-c']" in text
    assert "streamspark demo: OK" in text
    # quiet: Spark's start-up banner and librdkafka's reconnect chatter do not reach the user
    assert "Setting default log level" not in text and "|FAIL|" not in text, text[-4000:]
    assert list((tmp_path / "lake" / "sensor_readings").glob("year=*/month=*/day=*/hour=*/*.parquet"))
