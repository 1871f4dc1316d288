"""The Spark UI, switched on with ``spark.ui.enabled``, shows the streaming queries; neither its
pages nor Spark's event log nor anything the application process prints (its Spark workers and
JVM included, at DEBUG) shows the Kafka credentials."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from ..conftest import json_messages
from .secret_scan import find_secret, find_secret_in_tree

APP = Path(__file__).with_name("ui_app.py")
SECRET = "Hunter2-ui-s3cr3t"


def test_the_spark_ui_shows_the_streaming_queries_and_no_credentials(kafka, tmp_path):
    src, out = kafka.new_topic(), kafka.new_topic()
    kafka.produce(src, json_messages([{"i": i} for i in range(10)], key=lambda v: f"k{v['i'] % 3}".encode()))
    with open(tmp_path / "app.log", "wb") as log:
        proc = subprocess.run(
            [sys.executable, str(APP), kafka.address, src, out, str(tmp_path), SECRET],
            stdout=log,
            stderr=subprocess.STDOUT,
            timeout=240,
        )
    output = (tmp_path / "app.log").read_text()
    assert proc.returncode == 0, output[-3000:]
    assert "stateless: 10 outputs" in output and "stateful: 10 outputs" in output
    assert re.search(r"Spark UI: http://\S+:\d+", output)  # where to find it is logged
    pages = json.loads((tmp_path / "ui.json").read_text())["pages"]
    # the Structured Streaming tab lists both queries, each with its statistics page
    assert len(set(re.findall(r"streamspark-[0-9a-f]{8}", pages["/StreamingQuery/"]))) == 2
    assert len([path for path in pages if path.startswith("/StreamingQuery/statistics/")]) == 2
    assert len([path for path in pages if path.startswith("/SQL/execution/")]) >= 2  # the micro-batches' plans
    assert {path: where for path, text in pages.items() if (where := find_secret(text, SECRET))} == {}
    events = list((tmp_path / "events").rglob("events_*"))
    assert events and "SparkListenerSQLExecutionStart" in events[0].read_text()  # an uncompressed event log
    assert find_secret(output, SECRET) == []
    # and nowhere else: event log, checkpoints, the saved pages
    assert find_secret_in_tree(tmp_path, SECRET) == {}
