"""Run by the fork server's tests (``python -m tests.engine.fork_probe CODE``): prints what it
runs with as JSON, echoes its standard input, and exits with CODE (``wait``: sleeps until a
signal ends it)."""

import json
import os
import sys
import time

if __name__ == "__main__":
    print(
        json.dumps(
            {
                "argv": sys.argv[1:],
                "cwd": os.getcwd(),
                "probe": os.environ.get("PROBE"),
                "name": __name__,
                "pid": os.getpid(),
                "stdin": sys.stdin.read() if sys.argv[1] != "wait" else None,
            }
        ),
        flush=True,
    )
    print("to stderr", file=sys.stderr, flush=True)
    if sys.argv[1] == "wait":
        time.sleep(60)
    sys.exit(int(sys.argv[1]) if sys.argv[1] != "wait" else 0)
