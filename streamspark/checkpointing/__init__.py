"""Checkpointing: Spark Structured Streaming's checkpoints do the work of Quix Streams'
checkpoints (docs/guarantees.md); this package keeps the reference's exceptions at their path."""

from .exceptions import CheckpointProducerTimeout

__all__ = ("CheckpointProducerTimeout",)
