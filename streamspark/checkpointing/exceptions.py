"""Checkpoint exceptions, at the reference's path (``quixstreams.checkpointing.exceptions``).

>>> from streamspark.checkpointing.exceptions import CheckpointProducerTimeout
>>> from streamspark.sources import CheckpointProducerTimeout as same
>>> CheckpointProducerTimeout is same
True
"""

from __future__ import annotations

from ..exceptions import StreamsparkException

__all__ = ("CheckpointProducerTimeout",)


class CheckpointProducerTimeout(StreamsparkException):
    """Messages were still undelivered when a producer's flush (a source's ``flush(timeout)``)
    ran out of time."""
