"""Python's share of W8: what one state bucket's blob costs to load, touch and write back.

Usage: ``.venv/bin/python bench/state_blob_cost.py [--keys 2500000] [--touched 2500] [--rounds 3]``

Builds a :class:`~streamspark.state.store.KeyedStateStore` of ``--keys`` running counts (W2's
state), writes it as a compressed blob, then, ``--rounds`` times, loads the blob, updates
``--touched`` keys spread over the key space and writes it back compressed, timing each step
(no Spark: ``bench/state_scale.py`` times the whole micro-batch). W8 at 10M keys on a 4-partition
topic has buckets of 2.5M keys, each touched at 2,500 keys a round.

Prints one JSON object per round: ``{"keys": ..., "touched": ..., "blob_mb": ..., "load_s": ...,
"touch_s": ..., "write_s": ..., "pages_decoded": ...}``.
"""

from __future__ import annotations

import argparse
import json
import time

from streamspark.state.store import KeyedStateStore


def key_of(i: int) -> bytes:
    return b"key-%08d" % i


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--keys", type=int, default=2_500_000)
    parser.add_argument("--touched", type=int, default=2_500)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    store = KeyedStateStore(buckets=4, bucket=0)
    state_of = store.state_getter("counts")
    for i in range(args.keys):
        state_of(key_of(i)).set("n", 1)
    blob = store.dumps(compress=True)
    step = max(1, args.keys // args.touched)
    for _ in range(args.rounds):
        started = time.perf_counter()
        loaded = KeyedStateStore.loads(blob, buckets=4, bucket=0)
        loaded_at = time.perf_counter()
        state_of = loaded.state_getter("counts")
        for i in range(0, step * args.touched, step):
            state = state_of(key_of(i))
            state.set("n", state.get("n", 0) + 1)
        touched_at = time.perf_counter()
        blob = loaded.dumps(compress=True)
        written_at = time.perf_counter()
        row = {
            "keys": args.keys,
            "touched": args.touched,
            "blob_mb": round(len(blob) / 1e6, 1),
            "load_s": round(loaded_at - started, 3),
            "touch_s": round(touched_at - loaded_at, 3),
            "write_s": round(written_at - touched_at, 3),
            "pages_decoded": loaded.decoded_pages(),
        }
        print(json.dumps(row), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
