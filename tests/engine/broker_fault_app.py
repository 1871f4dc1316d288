"""Run by the broker-fault tests: an exactly-once per-key count to an output topic."""

import sys

from streamspark import Application


def count(value, state):
    n = state.get("n", 0) + 1
    state.set("n", n)
    return {"k": value["k"], "i": value["i"], "n": n}


def main() -> None:
    broker, src, out, state_dir, request_timeout = sys.argv[1:6]
    app = Application(
        broker_address=broker,
        consumer_group="broker-faults",
        auto_offset_reset="earliest",
        state_dir=state_dir,
        commit_interval=0.5,
        processing_guarantee="exactly-once",
        state_buckets=4,
        request_timeout=float(request_timeout),
        spark_master="local[2]",
        loglevel="INFO",
    )
    sdf = app.dataframe(app.topic(src)).apply(count, stateful=True)
    sdf.to_topic(app.topic(out))
    app.run()


if __name__ == "__main__":
    main()
