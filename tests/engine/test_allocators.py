"""The memory allocator settings of a local session's processes (engine/allocators.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from streamspark.engine.allocators import ARROW_POOL, LEAN_ALLOCATORS, arrow_pool_line, lean_allocator_env

_NAMES = (*LEAN_ALLOCATORS, ARROW_POOL[0])


def _worker_view(spark) -> dict:
    """What a Python task of ``spark`` sees: its allocator variables and pyarrow's pool."""

    def probe(_):
        import os

        import pyarrow as pa

        yield {name: os.environ.get(name) for name in _NAMES} | {"pool": pa.default_memory_pool().backend_name}

    return spark.sparkContext.parallelize([0], 1).mapPartitions(probe).collect()[0]


def test_the_settings_leave_what_the_environment_chose_and_can_be_turned_off():
    assert lean_allocator_env({}) == LEAN_ALLOCATORS
    assert lean_allocator_env({"MALLOC_ARENA_MAX": "8"}) == {k: v for k, v in LEAN_ALLOCATORS.items() if k != "MALLOC_ARENA_MAX"}
    assert lean_allocator_env({"STREAMSPARK_LEAN_ALLOCATORS": "off"}) == {}

    # the launcher's line reads its process's environment when it starts
    def pool(**env: str) -> str:
        script = f"{arrow_pool_line()}; echo ${{ARROW_DEFAULT_MEMORY_POOL:-unset}}"
        done = subprocess.run(["sh", "-c", script], env={"PATH": os.environ["PATH"], **env}, capture_output=True, text=True)
        return done.stdout.strip()

    assert pool() == "system"
    assert pool(ARROW_DEFAULT_MEMORY_POOL="jemalloc") == "jemalloc"  # a pool the environment chooses wins
    for off in ("0", "false", "NO", " Off "):
        assert pool(STREAMSPARK_LEAN_ALLOCATORS=off) == "unset"
    assert pool(STREAMSPARK_LEAN_ALLOCATORS="1") == "system"


def test_a_local_session_gives_them_to_its_jvm_and_python_workers_not_to_the_program(spark):
    if any(name in os.environ for name in _NAMES) or "PYSPARK_GATEWAY_PORT" in os.environ:
        pytest.skip("the environment of this run chooses allocators itself")
    seen = _worker_view(spark)
    assert {name: seen[name] for name in LEAN_ALLOCATORS} == LEAN_ALLOCATORS
    assert seen[ARROW_POOL[0]] == ARROW_POOL[1] and seen["pool"] == "system"
    assert spark._jvm.java.lang.System.getenv("MALLOC_ARENA_MAX") == LEAN_ALLOCATORS["MALLOC_ARENA_MAX"]
    # the program's process, and what it starts later, keep their own
    assert not any(name in os.environ for name in _NAMES)


_OFF = r"""
import json, os
from streamspark.engine.session import get_spark
spark = get_spark("local[1]")
def probe(_):
    import os
    import pyarrow as pa
    yield {"arena": os.environ.get("MALLOC_ARENA_MAX"), "pool": pa.default_memory_pool().backend_name}
print(json.dumps(spark.sparkContext.parallelize([0], 1).mapPartitions(probe).collect()[0]))
"""


@pytest.mark.harness(seconds=30)
def test_switched_off_a_session_keeps_the_allocators_defaults():
    """Also when the program inherits the launcher of a streamspark program that started it
    (its ``PYSPARK_PYTHON``, set in this process once it has a session): the launcher reads
    the switch when it starts a process."""
    env = {k: v for k, v in os.environ.items() if k not in _NAMES} | {
        "STREAMSPARK_LEAN_ALLOCATORS": "0",
        "STREAMSPARK_WARMUP": "0",
    }
    done = subprocess.run([sys.executable, "-c", _OFF], env=env, capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr[-3000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["arena"] is None and seen["pool"] != "system"


_FORK_SERVER = r"""
import json
from streamspark.engine.session import fork_server, get_spark
get_spark("local[1]")
server = fork_server()
with open(f"/proc/{server.process.pid}/environ", "rb") as f:
    env = dict(item.split(b"=", 1) for item in f.read().split(b"\0") if b"=" in item)
print(json.dumps({"arena": (env.get(b"MALLOC_ARENA_MAX") or b"").decode()}))
"""


@pytest.mark.harness(seconds=30)
def test_the_fork_server_gets_them_too():
    """The fork server starts before the JVM; the processes it forks get the same settings."""
    env = {k: v for k, v in os.environ.items() if k not in _NAMES} | {"STREAMSPARK_FORK_SERVER": "1", "STREAMSPARK_WARMUP": "0"}
    done = subprocess.run([sys.executable, "-c", _FORK_SERVER], env=env, capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr[-3000:]
    assert json.loads(done.stdout.strip().splitlines()[-1]) == {"arena": LEAN_ALLOCATORS["MALLOC_ARENA_MAX"]}
