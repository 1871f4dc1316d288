"""Run by the fork server's tests (``python -m tests.engine.fork_probe CODE``): prints what it
runs with as JSON, echoes its standard input, and exits with CODE (``wait``: sleeps until a
signal ends it; ``group``: the same in a process group of its own, as Spark's daemon does)."""

import json
import os
import sys
import time

if __name__ == "__main__":
    waits = sys.argv[1] in ("wait", "group")
    if sys.argv[1] == "group":
        os.setpgid(0, 0)
    print(
        json.dumps(
            {
                "argv": sys.argv[1:],
                "cwd": os.getcwd(),
                "probe": os.environ.get("PROBE"),
                "name": __name__,
                "pid": os.getpid(),
                "pgid": os.getpgrp(),
                "stdin": sys.stdin.read() if not waits else None,
            }
        ),
        flush=True,
    )
    print("to stderr", file=sys.stderr, flush=True)
    if waits:
        time.sleep(60)
    sys.exit(int(sys.argv[1]) if not waits else 0)
