"""A streamspark app run as a subprocess by the crash tests: src topic -> out topic, forever."""

import sys

from streamspark import Application


def main() -> None:
    broker, src, out, state_dir, group = sys.argv[1:6]
    app = Application(
        broker_address=broker,
        consumer_group=group,
        auto_offset_reset="earliest",
        state_dir=state_dir,
        commit_interval=0.2,
        commit_every=100,
        loglevel="INFO",
        spark_master="local[2]",
    )
    sdf = app.dataframe(app.topic(src))
    sdf = sdf.apply(lambda v: {**v, "seen": True})
    sdf.to_topic(app.topic(out))
    app.run()
    print("CLEAN-EXIT", flush=True)


if __name__ == "__main__":
    main()
