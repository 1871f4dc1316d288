"""Helpers for tests and demos: an embedded Kafka-protocol broker, and real object stores
(``SeaweedFS``: S3 + an Iceberg REST catalog; ``Azurite``: Azure Blob; ``GcsEmulator``: the GCS API).

>>> from streamspark.testing import EmbeddedBroker
>>> with EmbeddedBroker() as broker:  # doctest: +SKIP
...     print(broker.address)
127.0.0.1:...
"""

from .azurite import Azurite
from .broker import BrokerStartError, EmbeddedBroker
from .gcs import GcsEmulator
from .seaweedfs import SeaweedFS

__all__ = ("EmbeddedBroker", "BrokerStartError", "SeaweedFS", "Azurite", "GcsEmulator")
