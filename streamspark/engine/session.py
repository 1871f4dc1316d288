"""The shared SparkSession."""

from __future__ import annotations

import logging
import os
import sys
import threading
from typing import Any, Mapping, Optional

__all__ = ("get_spark", "DEFAULT_SPARK_CONF")

logger = logging.getLogger("streamspark")

#: Settings tuned for small machines; every key can be overridden through ``spark_conf``.
DEFAULT_SPARK_CONF: dict[str, str] = {
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.shuffle.partitions": "4",
    "spark.sql.streaming.pollingDelay": "50ms",
    "spark.sql.execution.arrow.pyspark.enabled": "true",
    "spark.sql.streaming.stateStore.providerClass": (
        "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider"
    ),
    "spark.python.worker.reuse": "true",
    "spark.driver.memory": "2g",
}

_lock = threading.Lock()


def get_spark(master: str = "local[*]", conf: Optional[Mapping[str, Any]] = None, app_name: str = "streamspark") -> Any:
    """Return the process-wide SparkSession, creating it on first use.

    The first caller's settings win (Spark has one session per JVM); later callers get the
    same session.
    """
    from pyspark.sql import SparkSession

    with _lock:
        active = SparkSession.getActiveSession()
        if active is not None:
            return active
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
        builder = SparkSession.builder.master(master).appName(app_name)
        for key, value in {**DEFAULT_SPARK_CONF, **dict(conf or {})}.items():
            builder = builder.config(key, str(value))
        logger.info("Starting Spark (master=%s)", master)
        spark = builder.getOrCreate()
        spark.sparkContext.setLogLevel("ERROR")
        from ._kafka_source import KafkaDataSource

        spark.dataSource.register(KafkaDataSource)
        return spark
