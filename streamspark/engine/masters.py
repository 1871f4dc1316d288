"""Spark masters: which one a run uses, and what a cluster master asks of the state dir.

Which master: ``Application(spark_master=...)`` (or ``Streamspark__Spark__Master`` /
``SPARK_MASTER``) when given; otherwise the master given to ``spark-submit`` (``--master``) when
the program was started by it; otherwise ``local[*]``. A SparkSession already running in the
process is used as it is, whatever was asked (Spark has one per JVM).

>>> is_local_master("local[2]"), is_local_master("spark://host:7077"), is_local_master("yarn")
(True, False, False)
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any, Optional

__all__ = (
    "is_local_master",
    "default_master",
    "submitted_conf",
    "running_session",
    "check_state_dir",
    "SHARED_STATE_ENV",
)

logger = logging.getLogger(__name__)

#: the environment variable that declares ``state_dir`` shared storage (see :func:`check_state_dir`)
SHARED_STATE_ENV = "Streamspark__State__Shared"


def is_local_master(master: str) -> bool:
    """True for masters whose executors run on this machine (``local``, ``local[…]``,
    ``local-cluster[…]``), False for cluster masters (``spark://``, ``yarn``, ``k8s://``, ...)."""
    return master.startswith("local")


def submitted_conf() -> dict[str, str]:
    """The Spark settings given to ``spark-submit`` (``--master``, ``--conf``, ``--name``,
    ``--properties-file``) when this program was started by it, else ``{}``.

    spark-submit starts the JVM first and hands its address to the program
    (``PYSPARK_GATEWAY_PORT``); its settings are then that JVM's ``spark.*`` properties.
    Outside spark-submit no JVM is started to find out.
    """
    if not os.environ.get("PYSPARK_GATEWAY_PORT"):
        return {}
    from pyspark import SparkConf, SparkContext

    # PySpark has no public call that connects to spark-submit's JVM (a SparkConf alone would not)
    SparkContext._ensure_initialized()  # noqa: SLF001
    return {str(key): str(value) for key, value in SparkConf().getAll()}


def default_master() -> str:
    """The master of a run that names none: spark-submit's ``--master`` when started by it,
    else ``local[*]``."""
    return submitted_conf().get("spark.master") or "local[*]"


def running_session() -> Optional[Any]:
    """The SparkSession already running in this process (active in this thread, or the
    default one), None if there is none."""
    from pyspark import SparkContext

    # no JVM to ask: do not start one (PySpark has no public check that starts nothing)
    if SparkContext._active_spark_context is None:  # noqa: SLF001
        return None
    from pyspark.sql import SparkSession

    try:
        return SparkSession.active()
    except Exception:  # a SparkContext without a session
        return None


def check_state_dir(master: str, checkpoint_dir: Path, shared: bool) -> None:
    """Refuse to run on a cluster master with a state dir not declared shared.

    On a cluster master the executors run on other machines (or containers) and write the
    state store files under the checkpoint, beside the driver's offset and commit logs: the
    directory must be one storage the driver and every executor mount at the same absolute
    path. streamspark cannot tell a shared mount from a local disk, so the user declares it
    (``Application(state_dir_shared=True)`` or ``Streamspark__State__Shared=true``). Local
    masters need nothing.

    >>> check_state_dir("local[*]", Path("state/g/checkpoint"), shared=False)
    >>> check_state_dir("spark://h:7077", Path("/mnt/shared/state/g/checkpoint"), shared=True)
    >>> check_state_dir("spark://h:7077", Path("/tmp/state/g/checkpoint"), shared=False)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    streamspark.exceptions.StreamsparkException: The checkpoint /tmp/state/g/checkpoint is on the driver's ...
    """
    if is_local_master(master) or shared:
        return
    from ..exceptions import StreamsparkException

    where = str(checkpoint_dir.absolute())
    relative = (
        "" if checkpoint_dir.is_absolute() else (" (state_dir is relative: resolved against the driver's working directory)")
    )
    raise StreamsparkException(
        f"The checkpoint {where} is on the driver's own disk{relative}, but spark_master={master!r} runs the "
        "executors on other machines, and they write the state store under it too. On a cluster, state_dir must "
        "be a directory that the driver and every executor mount at the same absolute path (NFS, a shared "
        "volume). If it is, declare it with Application(state_dir_shared=True) or the environment variable "
        f"{SHARED_STATE_ENV}=true (see docs/cluster.md)."
    )
