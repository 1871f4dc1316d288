"""What the driver loads while a new session's JVM starts.

Creating a session, PySpark launches the JVM and then waits for it, polling (about 1 s on a
2-core machine). Only after that does it import pandas and pyarrow (for the session's Arrow
settings, about 0.5 s), and :func:`.planner_processes.skip_data_source_lookup` walks
``sys.path`` (about 0.25 s): work on the Python side that does not need the JVM, done one
after the other with it. :class:`DriverPreload` does both in a thread while the JVM starts, so
the session is ready that much sooner. It only imports modules the driver imports anyway and
asks a question whose answer does not change in between; an import that fails here is left
to the code that needs the module, which then raises its own error.

Example::

    preload = DriverPreload()          # starts at once
    spark = builder.getOrCreate()      # the JVM starts meanwhile
    installed = preload.packages_installed()
"""

from __future__ import annotations

import importlib
import logging
import threading
from typing import Optional

from .planner_processes import data_source_packages_installed

__all__ = ("DRIVER_MODULES", "DriverPreload")

logger = logging.getLogger(__name__)

#: imported by a new session's driver once its JVM runs (what PySpark imports in the session's
#: constructor: pandas and pyarrow for its Arrow settings, through ``pyspark.testing.utils``)
DRIVER_MODULES = ("pandas", "pyarrow", "pyspark.testing.utils")


class DriverPreload:
    """A thread importing ``modules`` and asking :func:`.data_source_packages_installed`.

    >>> preload = DriverPreload(modules=("json",))
    >>> preload.packages_installed()
    False
    >>> preload.imported
    ('json',)
    """

    def __init__(self, modules: tuple[str, ...] = DRIVER_MODULES) -> None:
        self.modules = modules
        #: the modules imported (the others failed: left to the code that needs them)
        self.imported: tuple[str, ...] = ()
        self._installed: Optional[bool] = None
        self._thread = threading.Thread(target=self._run, name="streamspark-driver-preload", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        imported = []
        for name in self.modules:
            try:
                importlib.import_module(name)
            except Exception as exc:  # the session's own import reports it
                logger.debug("Not preloading %s: %s", name, exc)
            else:
                imported.append(name)
        self.imported = tuple(imported)
        try:
            self._installed = data_source_packages_installed()
        except Exception as exc:  # an unreadable folder on sys.path: asked again by the caller
            logger.debug("Could not look for Python data source packages: %s", exc)

    def packages_installed(self) -> Optional[bool]:
        """Wait for the thread; whether a ``pyspark_*`` module is installed (None: not known,
        ask :func:`.data_source_packages_installed` again)."""
        self._thread.join()
        return self._installed
