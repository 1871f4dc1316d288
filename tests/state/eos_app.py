"""Run by the crash harness: a stateful per-key count to an output topic, until killed."""

import sys

from streamspark import Application


def count(value, state):
    n = state.get("n", 0) + 1
    state.set("n", n)
    return {"k": value["k"], "i": value["i"], "n": n}


def main() -> None:
    broker, src, out, state_dir, group, guarantee = sys.argv[1:7]
    # small micro-batches while the harness kills (kills land between many commits);
    # the final run may take bigger ones (a restart may change the batch size)
    max_records = int(sys.argv[7]) if len(sys.argv) > 7 else 500
    # optional: a Spark master (e.g. a standalone cluster) and a mode: "stateless" (no state,
    # same outputs shape) or "group_by" (counted per group of keys, after a group_by)
    master = sys.argv[8] if len(sys.argv) > 8 else "local[2]"
    mode = sys.argv[9] if len(sys.argv) > 9 else "stateful"
    app = Application(
        broker_address=broker,
        consumer_group=group,
        auto_offset_reset="earliest",
        state_dir=state_dir,
        commit_interval=0.2,
        max_records_per_partition=max_records,
        processing_guarantee=guarantee,
        state_buckets=8,
        spark_master=master,
        loglevel="INFO",
    )
    sdf = app.dataframe(app.topic(src))
    if mode == "stateless":
        sdf = sdf.apply(lambda v: {"k": v["k"], "i": v["i"], "n": 0})
    elif mode == "group_by":
        sdf = sdf.apply(lambda v: {**v, "k": f"g{int(v['k'][1:]) % 20}"}).group_by("k").apply(count, stateful=True)
    else:
        sdf = sdf.apply(count, stateful=True)
    sdf.to_topic(app.topic(out))
    app.run()


if __name__ == "__main__":
    main()
