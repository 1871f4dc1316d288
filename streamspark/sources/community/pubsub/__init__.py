"""Google Cloud Pub/Sub source: a subscription's messages produced to a topic.

>>> from streamspark.sources.community.pubsub import PubSubSource
"""

from .consumer import PubSubConsumer, PubSubSubscriptionNotFound
from .pubsub import PubSubSource

__all__ = ("PubSubSource", "PubSubConsumer", "PubSubSubscriptionNotFound")
