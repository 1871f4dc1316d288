"""Helpers for a program's own tests and demos: an embedded Kafka-protocol broker.

>>> from streamspark.testing import EmbeddedBroker
>>> with EmbeddedBroker() as broker:  # doctest: +SKIP
...     print(broker.address)
127.0.0.1:...
"""

from .broker import BrokerStartError, EmbeddedBroker

__all__ = ("EmbeddedBroker", "BrokerStartError")
