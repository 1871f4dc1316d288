"""Amazon Kinesis source: a stream's records produced to a topic, resuming from checkpointed
sequence numbers.

>>> from streamspark.sources.community.kinesis import KinesisSource
"""

from .consumer import KinesisCheckpointer, KinesisConsumer, KinesisStreamShardsNotFound
from .kinesis import KinesisSource

__all__ = ("KinesisSource", "KinesisConsumer", "KinesisCheckpointer", "KinesisStreamShardsNotFound")
