"""A tiny application to start with spark-submit: it names no master and sets one Spark setting
in code; it prints, as JSON, the master and the settings its run got.

    spark-submit --master local[1] --conf ... submit_app.py BROKER SOURCE_TOPIC OUTPUT_TOPIC WORK_DIR
"""

from __future__ import annotations

import json
import sys

from streamspark import Application


def main() -> None:
    address, src, out, work = sys.argv[1:5]
    app = Application(
        broker_address=address,
        consumer_group="submitted",
        auto_offset_reset="earliest",
        state_dir=f"{work}/state",
        spark_conf={"spark.sql.streaming.pollingDelay": "60ms"},
    )
    app.dataframe(app.topic(src)).to_topic(app.topic(out))
    outputs = len(app.run(count=5, timeout=60))

    from pyspark.sql import SparkSession

    from streamspark.engine.session import fork_server

    spark = SparkSession.active()
    keys = ("spark.sql.shuffle.partitions", "spark.sql.streaming.pollingDelay", "spark.ui.enabled", "spark.app.name")
    print(
        json.dumps(
            {
                "config_master": app.config.spark_master,
                "master": spark.sparkContext.master,
                "outputs": outputs,
                "conf": {key: spark.conf.get(key) for key in keys},
                "fork_server": fork_server() is not None,
            }
        )
    )


if __name__ == "__main__":
    main()
