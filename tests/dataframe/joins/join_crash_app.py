"""Run by the join kill -9 test: readings as-of joined with device configs, to an output topic, until killed."""

import sys

from streamspark import Application


def main() -> None:
    broker, left, right, out, state_dir, group = sys.argv[1:7]
    app = Application(
        broker_address=broker,
        consumer_group=group,
        auto_offset_reset="earliest",
        state_dir=state_dir,
        commit_interval=0.2,
        max_records_per_partition=int(sys.argv[7]),
        processing_guarantee="exactly-once",
        state_buckets=4,
        spark_master="local[2]",
        loglevel="INFO",
    )
    readings = app.dataframe(app.topic(left))
    configs = app.dataframe(app.topic(right))
    readings.join_asof(configs, how="left", on_merge="keep-left").to_topic(app.topic(out))
    app.run()


if __name__ == "__main__":
    main()
