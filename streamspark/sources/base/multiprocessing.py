"""The multiprocessing context of source processes: ``spawn``.

A spawned process starts a fresh interpreter, so a source inherits no Spark, JVM or Kafka
client state from the application (``fork`` would copy the driver's threads and sockets).

>>> multiprocessing.get_start_method()
'spawn'
"""

from __future__ import annotations

import multiprocessing as _mp
from multiprocessing.context import SpawnContext

__all__ = ("multiprocessing",)

multiprocessing: SpawnContext = _mp.get_context("spawn")
