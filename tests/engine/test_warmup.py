"""A new local session starts Spark's Python processes in the background (engine/_warmup.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from streamspark.engine._warmup import warmup_enabled

#: a fresh process: start a local session, wait for its warm-up, list the Python daemons
#: below it (``python -m pyspark.daemon <worker module>``; forked workers share that command line,
#: and the processes of the fork server share the server's: it lists their arguments)
_CHILD = r"""
import json, os, sys
from streamspark.engine.fork_server import served_children
from streamspark.engine.session import fork_server, get_spark, wait_warmup

get_spark("local[2]")
done = wait_warmup(120)

def descendants(root):
    children = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat") as f:
                    ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            children.setdefault(ppid, []).append(int(name))
    found, todo = [], [root]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found

def parent(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return int(f.read().rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return 0

# a process the fork server runs shows the server's command line: the server lists its own
# children with their arguments, and a daemon's forked workers are found below them
server = fork_server()
served = served_children(server.folder) if server is not None else {}

def arguments(pid):
    ancestor = pid
    while ancestor > 1:
        if ancestor in served:
            return ["-m", *served[ancestor]]
        ancestor = parent(ancestor)
    with open(f"/proc/{pid}/cmdline", "rb") as f:
        return f.read().decode().split("\0")

daemons = []
for pid in descendants(os.getpid()):
    try:
        argv = arguments(pid)
    except OSError:
        continue
    if any(part.endswith("_fork_client.py") for part in argv):
        continue  # a launcher waiting for the process the fork server runs for it
    # Spark's own daemon, or streamspark's for task workers (engine/_daemon.py)
    for module in ("pyspark.daemon", "streamspark.engine._daemon"):
        if module in argv:
            daemons.append(argv[argv.index(module) + 1])
print(json.dumps({"done": done, "daemons": daemons}))
"""


_QUERY_DAEMONS = ("pyspark.sql.worker.create_data_source", "pyspark.sql.worker.plan_data_source_read", "pyspark.worker")


def _session_daemons(**env: str) -> dict:
    proc = subprocess.run([sys.executable, "-c", _CHILD], env={**os.environ, **env}, capture_output=True, text=True, timeout=240)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_warmup_runs_on_local_masters_unless_turned_off():
    assert warmup_enabled("local", {}) and warmup_enabled("local[*]", {"STREAMSPARK_WARMUP": "1"})
    assert not warmup_enabled("local[2]", {"STREAMSPARK_WARMUP": "0"})
    assert not warmup_enabled("local[2]", {"STREAMSPARK_WARMUP": "false"})
    assert not warmup_enabled("local[2]", {"STREAMSPARK_WARMUP": " Off"})  # as STREAMSPARK_JVM_ARCHIVE reads
    assert not warmup_enabled("spark://host:7077", {})  # a cluster's executors are not ours to warm


@pytest.mark.harness(seconds=40)
def test_a_new_local_session_starts_the_python_daemons_and_a_worker_per_core_before_any_query():
    warm = _session_daemons(STREAMSPARK_WARMUP="1")
    assert warm["done"] is True
    daemons = warm["daemons"]
    # the daemons a streaming query over the Kafka source needs, in the order it needs them
    assert set(_QUERY_DAEMONS) <= set(daemons), daemons
    # the task daemon and a forked worker per core (two cores here), kept for the next tasks
    assert daemons.count("pyspark.worker") >= 3, daemons
    # without the warm-up, a session has none of them until its first query (Spark itself
    # starts one at session start, to look up data sources)
    cold = _session_daemons(STREAMSPARK_WARMUP="0")
    assert cold["done"] is True
    assert not set(_QUERY_DAEMONS) & set(cold["daemons"]), cold["daemons"]
