"""An application with the Spark UI and Spark's event log on, and Kafka credentials: runs a
stateless and a stateful query, then saves the Spark UI's pages about them as JSON.

    python ui_app.py BROKER SOURCE_TOPIC OUTPUT_TOPIC WORK_DIR SECRET
"""

from __future__ import annotations

import json
import re
import sys
import urllib.request
from pathlib import Path

from streamspark import Application, ConnectionConfig


def main() -> None:
    address, src, out, work, secret = sys.argv[1:6]
    pages: dict[str, str] = {}
    Path(work, "events").mkdir(parents=True, exist_ok=True)
    for shape in ("stateless", "stateful"):
        app = Application(
            broker_address=ConnectionConfig(
                bootstrap_servers=address,
                security_protocol="plaintext",
                sasl_mechanism="PLAIN",
                sasl_username="streamspark",
                sasl_password=secret,
            ),
            producer_extra_config={"ssl.key.password": secret},
            consumer_group=f"ui-{shape}",
            auto_offset_reset="earliest",
            state_dir=f"{work}/state",
            spark_master="local[1]",
            loglevel="DEBUG",
            # the documented switch of the Spark UI (and Spark's event log, for the check)
            spark_conf={
                "spark.ui.enabled": "true",
                "spark.eventLog.enabled": "true",
                "spark.eventLog.dir": f"file://{work}/events",
                "spark.eventLog.compress": "false",
            },
        )
        sdf = app.dataframe(app.topic(src))
        if shape == "stateful":
            sdf = sdf.apply(lambda v, state: {**v, "n": state.get("n", 0) + 1}, stateful=True)
        sdf.to_topic(app.topic(out))
        print(f"{shape}: {len(app.run(count=10, timeout=60))} outputs", flush=True)

    from pyspark.sql import SparkSession

    spark = SparkSession.active()
    ui = spark.sparkContext.uiWebUrl

    def get(path: str) -> str:
        with urllib.request.urlopen(f"{ui}{path}", timeout=30) as resp:
            text = resp.read().decode()
        pages[path] = text
        return text

    streaming = get("/StreamingQuery/")
    for run_id in sorted(set(re.findall(r"statistics/?\?id=([0-9a-f-]{36})", streaming))):
        get(f"/StreamingQuery/statistics/?id={run_id}")
    app_id = spark.sparkContext.applicationId
    executions = json.loads(get(f"/api/v1/applications/{app_id}/sql?details=true&planDescription=true&length=1000"))
    for execution in executions:
        get(f"/SQL/execution/?id={execution['id']}")
    for path in ("/SQL/", "/jobs/", "/stages/", "/environment/", "/executors/"):
        get(path)
    get(f"/api/v1/applications/{app_id}/environment")
    Path(work, "ui.json").write_text(json.dumps({"ui": ui, "pages": pages}))
    spark.stop()  # completes the event log


if __name__ == "__main__":
    main()
