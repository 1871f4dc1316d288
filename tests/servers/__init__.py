"""Real servers the test suite starts on 127.0.0.1 (not part of the library): SeaweedFS (S3 and
an Iceberg REST catalog), Azurite (Azure Blob), a GCS emulator, PostgreSQL, Redis, InfluxDB 1,
moto, OpenSearch/MongoDB/BigQuery emulators. The embedded Kafka broker stays public in
:mod:`streamspark.testing`, for users' own tests."""

from .azurite import Azurite
from .gcs import GcsEmulator
from .seaweedfs import SeaweedFS

__all__ = ("SeaweedFS", "Azurite", "GcsEmulator")
