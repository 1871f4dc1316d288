"""``KafkaReplicatorSource``: replicate a topic of another Kafka cluster into the application's.

>>> from streamspark.sources.core.kafka import KafkaReplicatorSource
"""

from .checkpoint import Checkpoint
from .kafka import KafkaReplicatorSource
from .quix import QuixEnvironmentSource

__all__ = ("KafkaReplicatorSource", "QuixEnvironmentSource", "Checkpoint")
