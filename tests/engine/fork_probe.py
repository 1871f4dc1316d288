"""Run by the fork server's tests (``python -m tests.engine.fork_probe CODE``): prints what it
runs with as JSON, echoes its standard input, and exits with CODE (``wait``: sleeps until a
signal ends it; ``group``: the same in a process group of its own, as Spark's daemon does)."""

import json
import os
import signal
import sys
import time


def disposition(number: int) -> str:
    """``ignored``, ``default`` or the handler's name (Python gives an inherited SIG_IGN as 1)."""
    handler = signal.getsignal(number)
    if handler in (signal.SIG_IGN, int(signal.SIG_IGN)):
        return "ignored"
    if handler in (signal.SIG_DFL, int(signal.SIG_DFL)):
        return "default"
    return getattr(handler, "__name__", str(handler))


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
                "signals": {
                    name: disposition(getattr(signal, name))
                    for name in ("SIGINT", "SIGTERM", "SIGHUP", "SIGCHLD", "SIGPIPE", "SIGXFSZ")
                },
                "stdin": sys.stdin.read() if not waits else None,
            }
        ),
        flush=True,
    )
    print("to stderr", file=sys.stderr, flush=True)
    if waits:
        time.sleep(60)
    sys.exit(int(sys.argv[1]) if not waits else 0)
