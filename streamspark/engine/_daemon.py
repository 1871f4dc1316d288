"""Spark's Python daemon for local sessions, with the task modules imported before it forks.

Spark starts one daemon per executor (``python -m <spark.python.daemon.module>``) and forks a
worker from it for each Python task. Each fresh worker then imports what its task needs: on 2
cores the first tasks of a run spent 0.1-0.15 s importing the engine and 0.15-0.35 s importing
pandas (pyarrow loads it the first time it converts a Python list). Importing them once in the
daemon gives every forked worker those modules at no cost, and the forked workers share their
pages with the daemon. Measured on 2 cores (``bench/user.py``, 500k messages, three paired
runs): W1's micro-batch took 2.68 s against 2.97 s, W2's 3.87 s against 4.27 s, W1-avro's
3.62 s against 3.77 s; peak memory was the same.

Forking after these imports is what Python's ``fork`` start method does after any import: the
daemon then has two native threads besides its own, numpy's BLAS pool and Arrow's jemalloc
background thread, and both libraries register fork handlers that leave a forked child
consistent. No client, pool or Python thread is created before the fork.

Example (what :mod:`.session` sets for a local master)::

    builder.config("spark.python.daemon.module", "streamspark.engine._daemon")
"""

from __future__ import annotations

import importlib
import os
import sys

__all__ = ("PRELOADED", "preload")

#: imported by the daemon before its first fork (each one if it is installed)
PRELOADED = (
    "pyspark.worker",
    "pandas",
    "streamspark.engine.task_entry",
    "streamspark.engine._kafka_source",
    "streamspark.state.store",
    "streamspark.engine._plan",
    "streamspark.dataframe.exceptions",
)


def preload(names: tuple[str, ...] = PRELOADED) -> list[str]:
    """Import ``names`` (skipping those that fail); returns the names imported."""
    done = []
    for name in names:
        try:
            importlib.import_module(name)
        except Exception as exc:  # a missing optional package: the worker imports it itself
            print(f"streamspark daemon: not preloading {name}: {exc}", file=sys.stderr)
            continue
        done.append(name)
    if "pandas" in done:
        try:  # pyarrow imports its pandas shim the first time it converts Python objects
            import pyarrow

            pyarrow.array([0])
        except Exception as exc:
            print(f"streamspark daemon: not preloading pyarrow's pandas support: {exc}", file=sys.stderr)
    numpy = sys.modules.get("numpy")
    if numpy is not None:
        # a forked worker would otherwise start from the daemon's state of numpy's global
        # random generator, as every other worker does (Python reseeds only ``random``)
        os.register_at_fork(after_in_child=numpy.random.seed)
    return done


if __name__ == "__main__":
    preload()
    from pyspark.daemon import manager

    manager()
