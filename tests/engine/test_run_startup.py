"""``app.run()`` in a program that has no Spark session yet: the session it starts does not warm
Spark's Python processes up (engine/session.py), since its query starts them right away."""

from __future__ import annotations

import json
import os
import subprocess
import sys

#: a fresh program: run a pipeline on the broker, then ask Spark for the warm-up's data source
_CHILD = r"""
import json, sys
from streamspark import Application

app = Application(broker_address=sys.argv[1], consumer_group=sys.argv[3], auto_offset_reset="earliest",
                  state_dir=sys.argv[4], loglevel="WARNING")
app.dataframe(app.topic(sys.argv[2]))
rows = app.run(count=3, timeout=60)
from pyspark.sql import SparkSession
try:
    SparkSession.active().read.format("streamspark_warmup").load()
    warmed = True
except Exception:
    warmed = False
print(json.dumps({"rows": rows, "warmed": warmed}))
"""


def test_a_session_started_by_run_skips_the_warm_up_and_the_run_is_complete(broker, kafka, tmp_path):
    src = kafka.new_topic(partitions=2)
    kafka.produce(src, [{"value": json.dumps({"i": i}).encode(), "partition": i % 2} for i in range(3)])
    proc = subprocess.run(
        [sys.executable, "-c", _CHILD, broker.address, src, "g-startup", str(tmp_path)],
        env={**os.environ, "STREAMSPARK_WARMUP": "1"},
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert sorted(r["i"] for r in result["rows"]) == [0, 1, 2]
    assert result["warmed"] is False
