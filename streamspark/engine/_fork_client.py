"""The launcher's side of the fork server (:mod:`.fork_server`): run as a script with
``python -S -E _fork_client.py <python> <args...>`` by the launcher of :mod:`._worker_python`.

It asks the server for a process running ``<args>``, handing it this process's standard
input, output and error, environment and working directory; then it passes SIGTERM, SIGINT and
SIGHUP on to that process (those it started with ignored stay ignored, in both) and exits as it
did; when that process moves to a process group of its own, so does this one. When the server
is not there or does not serve the request, it becomes ``<python> <args...>`` (``exec``), as
the launcher would have. Standard library only: it runs before any site packages are on the
path.
"""

import json
import os
import select
import signal
import socket
import sys


#: the signals passed on to the served process, unless this process started with them ignored
FORWARDED = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)
#: the signals whose disposition (ignored or not) the served process takes from this one
SIGNALS = FORWARDED + (signal.SIGCHLD,)


def _exec(python, args):
    os.execv(python, [python] + args)


def _follow_group(conn, pid, group, seconds=30.0):
    """Leave this process's group when the served process leaves ``group``, the server's (Spark's
    daemon puts itself in a group of its own as it starts), so that a signal to the group this
    process started in reaches neither, as when the interpreter was started itself; a signal to
    this process is still passed on. Looks for ``seconds`` at most (often at first, then less),
    or until the server answers: it reaps the process, then sends its status and closes the
    connection, so the socket turns readable (the status may already sit in the reader's buffer,
    and then the process is gone)."""
    if group is None:
        return
    waited, step = 0.0, 0.01
    while waited < seconds:
        try:
            if os.getpgid(pid) != group:
                os.setpgid(0, 0)
                return
        except OSError:  # the process was reaped, or this one leads its session
            return
        readable, _, _ = select.select([conn], [], [], step)
        if readable:
            return
        waited += step
        step = min(step * 2, 0.5)


def _ignored():
    """The signals this process started with ignored, which the served process must ignore too
    (the JVM starts Spark's Python processes with SIGINT ignored: Ctrl-C at the program does
    not reach them)."""
    return [int(number) for number in SIGNALS if signal.getsignal(number) == signal.SIG_IGN]


def main(argv):
    python, args = argv[1], argv[2:]
    ignored = _ignored()
    path = os.environ.get("STREAMSPARK_FORK_SERVER_SOCKET")
    if not path or len(args) < 2 or args[0] != "-m" or not os.path.exists(path):
        _exec(python, args)
    try:
        conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        conn.connect(path)
        request = {"module": args[1], "args": args[2:], "cwd": os.getcwd(), "env": dict(os.environ), "ignored": ignored}
        message = json.dumps(request).encode()
        conn.sendall(len(message).to_bytes(4, "big"))
        socket.send_fds(conn, [message], [0, 1, 2])
        replies = conn.makefile("rb")
        first = json.loads(replies.readline() or b"{}")
    except (OSError, ValueError):
        _exec(python, args)
    pid = first.get("pid")
    if pid is None:  # refused (or the server went away): start the interpreter
        _exec(python, args)

    def forward(number, frame):
        try:
            os.kill(pid, number)
        except ProcessLookupError:
            pass

    for number in FORWARDED:
        if number not in ignored:
            signal.signal(number, forward)
    _follow_group(conn, pid, first.get("group"))
    try:
        line = replies.readline()
        status = json.loads(line)["status"] if line else None
    except (OSError, ValueError, KeyError):
        status = None
    if status is None:  # the server went away: the child may still run
        sys.exit(1)
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        signal.signal(number, signal.SIG_DFL)
        os.kill(os.getpid(), number)
    sys.exit(os.WEXITSTATUS(status))


if __name__ == "__main__":
    main(sys.argv)
