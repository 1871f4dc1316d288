"""``FileSink``: each topic partition's batch of a micro-batch becomes one file.

Files go to ``<directory>/<topic>/<partition>/<start offset><extension>`` (zero-padded so
names sort by offset). A replayed micro-batch writes the same files again, so without
``append`` the files are exactly-once; with ``append`` (JSON only) they are at-least-once.
Any write error becomes ``SinkBackpressureError(retry_after=5)``: the batch is retried.
"""

from __future__ import annotations

import logging
from typing import Optional, Union

from ...base.batch import SinkBatch
from ...base.exceptions import SinkBackpressureError
from ...base.sink import BatchingSink, ClientConnectFailureCallback, ClientConnectSuccessCallback
from .destinations import Destination, LocalDestination
from .formats import Format, FormatName, resolve_format

__all__ = ("FileSink",)

logger = logging.getLogger(__name__)


class FileSink(BatchingSink):
    """Write batches as files (JSON Lines or Parquet) locally, to S3 or to Azure Blob.

    >>> import tempfile, os
    >>> root = tempfile.mkdtemp()
    >>> sink = FileSink(directory=os.path.relpath(root), format="json")
    >>> sink.setup(); sink.add({"a": 1}, b"k", 5, None, "readings", 0, 42); sink.flush()
    >>> sorted(os.listdir(os.path.join(root, "readings", "0")))
    ['0000000000000000042.jsonl']

    :param directory: the base directory (letters, digits, spaces, ``.``, ``/``, ``_``).
    :param format: ``"json"``, ``"parquet"`` or a :class:`Format`.
    :param destination: a :class:`Destination` (default: ``LocalDestination()``).
    :param on_client_connect_success: called after the destination's ``setup()`` succeeds.
    :param on_client_connect_failure: called with the exception when ``setup()`` fails.
    """

    def __init__(
        self,
        directory: str = "",
        format: Union[FormatName, Format] = "json",
        destination: Optional[Destination] = None,
        on_client_connect_success: Optional[ClientConnectSuccessCallback] = None,
        on_client_connect_failure: Optional[ClientConnectFailureCallback] = None,
    ) -> None:
        super().__init__(on_client_connect_success, on_client_connect_failure)
        self._format = resolve_format(format)
        self._destination = destination or LocalDestination()
        self._destination.set_directory(directory)
        self._destination.set_extension(self._format)

    def setup(self) -> None:
        self._destination.setup()

    def write(self, batch: SinkBatch) -> None:
        data = self._format.serialize(batch)
        try:
            self._destination.write(data, batch)
        except Exception as exc:
            logger.error("FileSink could not write %s: %s", self._destination.path(batch), exc)
            raise SinkBackpressureError(retry_after=5.0) from exc
