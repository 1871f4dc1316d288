"""Every public name and every package imports as the first import of a fresh interpreter.

Inside one test process the import order is fixed by whatever ran first, which hides import
cycles (``from streamspark import ConnectionConfig`` used to fail with a circular import of
``streamspark.kafka.producer`` when nothing else had been imported before it).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import streamspark

_ROOT = Path(streamspark.__file__).parent
_PACKAGES = sorted(".".join(("streamspark", *init.parent.relative_to(_ROOT).parts)) for init in _ROOT.rglob("__init__.py"))


def _import_first(statement: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", statement], capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("name", [n for n in streamspark.__all__ if n != "__version__"])
def test_public_name_imports_first(name: str) -> None:
    done = _import_first(f"from streamspark import {name}; print({name}.__name__)")
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == name


def test_packages_are_found() -> None:
    assert "streamspark.kafka" in _PACKAGES and len(_PACKAGES) > 10


@pytest.mark.parametrize("package", _PACKAGES)
def test_package_imports_first(package: str) -> None:
    done = _import_first(f"import {package}")
    assert done.returncode == 0, done.stderr[-2000:]


def test_spark_task_modules_leave_the_application_layer_unimported() -> None:
    """Every fresh Spark Python worker imports these; pydantic (the Kafka connection settings)
    and the InfluxDB sink's HTTP client cost ~0.15 s there and no task needs them."""
    done = _import_first(
        "import sys, streamspark.engine._kafka_source, streamspark.engine.task_entry, "
        "streamspark.sinks.datalake.sink, streamspark.sinks.datalake._columnar; "
        "print(sorted(m for m in ('pydantic', 'streamspark.kafka', 'streamspark.sinks.core.influxdb3', "
        "'streamspark.app') if m in sys.modules))"
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "[]"


@pytest.mark.parametrize(
    "statement",
    [
        "from streamspark.models import Row, Headers, HeadersMapping, HeadersTuple, HeadersValue, KafkaHeaders",
        "from streamspark.models import MessageKey, MessageValue, TimestampExtractor",
        "from streamspark.models import SchemaRegistryClientConfig, SchemaRegistrySerializationConfig",
        "from streamspark.sinks import ClientConnectSuccessCallback, ClientConnectFailureCallback",
        "from streamspark.state.rocksdb import RocksDBOptions",
    ],
)
def test_names_quix_streams_programs_import_from_package_level(statement: str) -> None:
    """Imports a ported program writes, as Quix Streams' packages offer them."""
    result = subprocess.run([sys.executable, "-c", statement], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
