"""Memory allocator settings for the processes of a local session (the JVM and Spark's Python
processes), which hand freed memory back to the system sooner.

A micro-batch passes its records through the JVM and the Python workers in buffers of many
sizes; after it, the allocators keep much of that memory for reuse, so a process's resident
memory stays near its peak. glibc's ``malloc`` keeps up to eight arenas per core (the JVM's many
threads spread over them), and raises its threshold for serving large blocks with ``mmap`` as
large blocks are freed, after which they come from the heap and stay there; pyarrow's
default pool (mimalloc or jemalloc) keeps freed pages for later. The settings here cap the
arenas at two, fix the ``mmap`` and trim thresholds at 128 KiB, and give pyarrow the system
allocator.
Measured with ``bench/user.py``'s W2 at 1M messages on 2 cores, peak memory of the program, JVM
and workers (RSS / PSS, MB), three runs each: 1623 / 1388, 1695 / 1482 and 1609 / 1337 with the
defaults; 1445 / 1237, 1401 / 1174 and 1461 / 1239 with these settings, for the same time to
the last output (docs/benchmarks.md).

A variable the environment already sets is left as it is; ``STREAMSPARK_LEAN_ALLOCATORS=0``
turns them all off. glibc's are set for the JVM a local session starts, which passes them on
to the Python processes it starts in turn (:func:`lean_allocator_env`); pyarrow's pool by the
launcher those processes start through (:func:`arrow_pool_line`, :mod:`._worker_python`). The
program's own process keeps its allocators.

>>> lean_allocator_env({})["MALLOC_ARENA_MAX"]
'2'
>>> lean_allocator_env({"MALLOC_ARENA_MAX": "4"}).get("MALLOC_ARENA_MAX") is None
True
>>> lean_allocator_env({"STREAMSPARK_LEAN_ALLOCATORS": "0"})
{}
"""

from __future__ import annotations

from typing import Mapping

from ._env import switched_on

__all__ = ("ARROW_POOL", "LEAN_ALLOCATORS", "SWITCH", "arrow_pool_line", "lean_allocator_env")

#: the environment variable that turns the settings off (``0``)
SWITCH = "STREAMSPARK_LEAN_ALLOCATORS"

#: glibc's settings (see the module), read when a process starts
LEAN_ALLOCATORS: dict[str, str] = {
    "MALLOC_ARENA_MAX": "2",
    "MALLOC_MMAP_THRESHOLD_": "131072",
    "MALLOC_TRIM_THRESHOLD_": "131072",
}
#: pyarrow's pool, read when a process first allocates through it
ARROW_POOL = ("ARROW_DEFAULT_MEMORY_POOL", "system")


def lean_allocator_env(environ: Mapping[str, str]) -> dict[str, str]:
    """The variables of :data:`LEAN_ALLOCATORS` that ``environ`` does not set; none when
    ``STREAMSPARK_LEAN_ALLOCATORS`` is off."""
    if not switched_on(SWITCH, environ):
        return {}
    return {name: value for name, value in LEAN_ALLOCATORS.items() if name not in environ}


def arrow_pool_line() -> str:
    """The line of a launcher script that gives the process pyarrow's system allocator, unless
    its environment chooses a pool or turns the settings off (``STREAMSPARK_LEAN_ALLOCATORS``,
    read when the process starts: a program started by a streamspark program inherits its
    launcher, and its own choice counts).

    >>> import os, subprocess
    >>> def pool(**env):
    ...     script = f"{arrow_pool_line()}; echo ${{ARROW_DEFAULT_MEMORY_POOL:-unset}}"
    ...     env["PATH"] = os.environ["PATH"]
    ...     return subprocess.run(["sh", "-c", script], env=env, capture_output=True, text=True).stdout.strip()
    >>> pool(), pool(ARROW_DEFAULT_MEMORY_POOL="jemalloc"), pool(STREAMSPARK_LEAN_ALLOCATORS=" Off")
    ('system', 'jemalloc', 'unset')
    """
    name, value = ARROW_POOL
    return (
        f"case \"$(printf '%s' \"${{{SWITCH}:-1}}\" | tr -d ' \\t' | tr 'A-Z' 'a-z')\" in "
        f'0|false|no|off) ;; *) {name}="${{{name}:-{value}}}"; export {name} ;; esac'
    )
