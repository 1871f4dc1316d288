"""A lake-sink app run as a subprocess by the crash test; it kills its own process group with
SIGKILL at the point named by CRASH_AT: ``before_commit:<batch>`` (files written, not registered)
or ``after_commit:<batch>`` (registered in the catalog, not yet committed by Spark)."""

import os
import signal
import sys

from streamspark import Application
from streamspark.sinks.datalake import TSDataLakeSink


class CrashingLakeSink(TSDataLakeSink):
    def on_batch_commit(self, batch_id, started_ms):
        point, _, at = os.environ.get("CRASH_AT", "").partition(":")
        if point == "before_commit" and self._pending_files and batch_id >= int(at):
            print(f"KILL before commit of batch {batch_id}", flush=True)
            os.killpg(os.getpgid(0), signal.SIGKILL)
        super().on_batch_commit(batch_id, started_ms)
        if point == "after_commit" and batch_id >= int(at):
            print(f"KILL after commit of batch {batch_id}", flush=True)
            os.killpg(os.getpgid(0), signal.SIGKILL)


def main() -> None:
    broker, src, lake, state_dir, group = sys.argv[1:6]
    app = Application(
        broker_address=broker,
        consumer_group=group,
        auto_offset_reset="earliest",
        state_dir=state_dir,
        commit_interval=0.2,
        commit_every=40,
        loglevel="INFO",
        spark_master="local[2]",
    )
    sink = CrashingLakeSink(s3_prefix=lake, table_name="events", hive_columns=["year", "month"], timestamp_column="ts")
    app.dataframe(app.topic(src)).sink(sink)
    app.run(timeout=float(os.environ.get("IDLE_TIMEOUT", "4")))
    print("CLEAN-EXIT", flush=True)


if __name__ == "__main__":
    main()
