"""The benchmark workloads written with Quix Streams; run by bench/run.py in its own venv.

Usage: python quix_workloads.py BROKER WORKLOAD SRC OUT STATE_DIR  -> prints seconds as JSON

OUT is the output topic, or for W4 the directory of Quix Streams' own Parquet file sink (its
closest built-in to a data lake: one file per topic partition and commit, no hour partitions
and no catalog, so it does less work than streamspark's lake sink).
"""

import json
import sys
import time
import uuid

from quixstreams import Application


def count(value, state):
    n = state.get("n", 0) + 1
    state.set("n", n)
    return {**value, "n": n}


def main() -> None:
    broker, workload, src, out, state_dir = sys.argv[1:6]
    app = Application(
        broker_address=broker,
        consumer_group=f"quix-{uuid.uuid4().hex[:6]}",
        auto_offset_reset="earliest",
        state_dir=state_dir,
        loglevel="WARNING",
        # as bench/run.py's BIG_FETCH: noida-db answers fetches with whole partition tails
        consumer_extra_config={"receive.message.max.bytes": 1_000_000_000},
    )
    sdf = app.dataframe(app.topic(src, timestamp_extractor=(lambda v, h, t, tt: v["ts"]) if workload == "W3" else None))
    if workload == "W1":
        sdf = sdf[sdf["temp"] > 25]
        sdf["temp_f"] = sdf["temp"] * 9 / 5 + 32
        sdf = sdf.apply(lambda v: {**v, "tag": "hot"})
    elif workload == "W2":
        sdf = sdf.apply(count, stateful=True)
    elif workload == "W3":
        from quixstreams.dataframe.windows import Count, Mean

        sdf = sdf.tumbling_window(10_000).agg(avg=Mean("temp"), n=Count()).final()
    if workload == "W4":
        from quixstreams.sinks.community.file.local import LocalFileSink

        sdf.sink(LocalFileSink(directory=out, format="parquet"))
    else:
        sdf.to_topic(app.topic(out))
    idle = 3.0
    started = time.perf_counter()
    app.run(timeout=idle)
    print(json.dumps({"seconds": time.perf_counter() - started - idle}))


if __name__ == "__main__":
    main()
