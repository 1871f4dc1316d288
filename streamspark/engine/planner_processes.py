"""Spark's Python planner processes: one spared, the others released while a query runs.

Starting a query over a Python data source (our Kafka source), Spark's driver runs three short
Python jobs: it looks up installed data source packages, creates the data source, and plans
its reader. Each runs in a process forked from a Python daemon of its own, and Spark keeps
each daemon and its forked process for the rest of the session, idle: six processes, about
0.2 GB of memory on a small machine, for as long as the query runs (measured in a W2 run:
daemons of 21-29 MB, their forked processes 40-45 MB each).

- :func:`skip_data_source_lookup` spares the first one when it would find nothing: Spark looks
  for importable modules named ``pyspark_*`` that define a ``DefaultSource``; with no module of
  that name installed, the session is told the lookup's empty answer. It took about 0.9 s of a
  first query's start on 2 cores.
- :func:`release_planner_processes` stops the others through Spark's own worker factories (the
  call Spark makes when its session stops). A factory that is stopped starts its daemon again
  when a later query of the session needs it, which costs that query about as much as the
  first query's start paid (a Python process importing PySpark, per module).

Spark's fields are reached by reflection, because Spark does not offer them to Python: fields
only, since enumerating the methods of Spark's classes through py4j loads classes that are not
on a pip-installed PySpark's class path and breaks the gateway. Anything unexpected (another
Spark version, a session in another process) leaves Spark as it is.

Example::

    skip_data_source_lookup(spark)                # True on a fresh session, nothing to find
    released = release_planner_processes(spark)   # 2 after a first query started
"""

from __future__ import annotations

import logging
import pkgutil
from typing import Any, Optional

__all__ = ("PLANNER_MODULES", "data_source_packages_installed", "release_planner_processes", "skip_data_source_lookup")

logger = logging.getLogger(__name__)

#: the Python modules Spark's driver runs to plan a query over a Python data source (not the
#: task workers, ``pyspark.worker``, nor the streaming source's own runner)
PLANNER_MODULES = frozenset(
    {
        "pyspark.sql.worker.lookup_data_sources",
        "pyspark.sql.worker.create_data_source",
        "pyspark.sql.worker.plan_data_source_read",
    }
)


def _field(jvm: Any, class_name: str, field_name: str, owner: Any) -> Any:
    """``owner.field_name`` (a static field when ``owner`` is None), private or not."""
    field = jvm.java.lang.Class.forName(class_name).getDeclaredField(field_name)
    field.setAccessible(True)
    return field.get(owner)


#: the prefix of the module names Spark's lookup of Python data source packages imports
LOOKUP_PREFIX = "pyspark_"


def data_source_packages_installed() -> bool:
    """Whether a module that Spark's lookup of Python data source packages would import
    (``pyspark_*``) is importable here. It walks every folder of ``sys.path`` (about 0.25 s on a
    2-core machine with a large environment), so a new session asks it while its JVM starts
    (:mod:`.driver_preload`).

    Example::

        data_source_packages_installed()   # False unless a pyspark_* module is installed
    """
    return any(module.name.startswith(LOOKUP_PREFIX) for module in pkgutil.iter_modules())


def skip_data_source_lookup(spark: Any, installed: Optional[bool] = None) -> bool:
    """Give the session the answer of Spark's lookup of installed Python data source packages
    (an empty one) when no module its lookup would import is installed, so that Spark does
    not start a Python process to look. Call it before the session's first use of a Python
    data source. Never raises.

    :param installed: :func:`data_source_packages_installed`'s answer when it is known already
        (None: asked here).
    :return: whether the lookup is spared (False: Spark looks as usual, or has looked).
    """
    if data_source_packages_installed() if installed is None else installed:
        return False
    try:
        jvm = spark.sparkContext._jvm  # noqa: SLF001 (PySpark offers no public JVM view)
        manager = jvm.java.lang.Class.forName("org.apache.spark.sql.execution.datasources.DataSourceManager$")
        found = manager.getDeclaredField("dataSourceBuilders")
        found.setAccessible(True)
        if not found.get(None).isEmpty():
            return False  # Spark has looked already
        nothing = _field(jvm, "scala.collection.immutable.Map$EmptyMap$", "MODULE$", None)
        found.set(None, jvm.scala.Some(nothing))
    except Exception as exc:  # another Spark version, a remote session: Spark looks itself
        logger.debug("Spark looks for Python data source packages itself: %s", exc)
        return False
    return True


def release_planner_processes(spark: Any) -> int:
    """Stop the idle Python processes Spark's driver keeps for planning queries over Python
    data sources (:data:`PLANNER_MODULES`); Spark starts them again when a query needs them.

    Call it once a query is running (its micro-batches are planned by the streaming source's
    runner, not by these). Never raises.

    :return: how many of Spark's worker factories were stopped.
    """
    try:
        jvm = spark.sparkContext._jvm  # noqa: SLF001 (PySpark offers no public JVM view)
        companion = _field(jvm, "org.apache.spark.SparkEnv$", "MODULE$", None)
        env = _field(jvm, "org.apache.spark.SparkEnv$", "env", companion)
        if env is None:
            return 0
        factories = _field(jvm, "org.apache.spark.SparkEnv", "pythonWorkers", env)
        stopped = 0
        entries = factories.iterator()
        while entries.hasNext():
            entry = entries.next()  # a Scala pair (key, factory)
            if entry.productElement(0).workerModule() in PLANNER_MODULES:
                entry.productElement(1).stop()
                stopped += 1
    except Exception as exc:  # another Spark version, a remote session: leave them
        logger.debug("Spark's planner processes stay: %s", exc)
        return 0
    if stopped:
        logger.debug("Stopped %d of Spark's idle planner process groups", stopped)
    return stopped
