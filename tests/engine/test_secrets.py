"""Kafka credentials and sinks' secrets stay out of query plans, logs, checkpoints and errors.

The application gets a SASL password (and an SSL key password, an OAuth client secret) that
still connects to the plaintext test broker: librdkafka uses ``sasl.*`` only when
``security.protocol`` asks for SASL. A sink holds a password of its own, as a database sink
would. Every query shape runs with them; the password must not show anywhere, decoded or not.
The Spark UI and event log, and the whole output of an application process (its Spark workers
and JVM included), are checked in ``test_spark_ui.py``.
"""

from __future__ import annotations

import contextlib
import io
import json
import logging
import traceback
from pathlib import Path
from typing import Any, Iterator

import pytest

from streamspark import ConnectionConfig
from streamspark.engine import runner as runner_module
from streamspark.engine.strategies import Strategies
from streamspark.engine._kafka_source import SourcePrivate, query_source, source_options
from streamspark.engine._plan import PipelinePlan
from streamspark.exceptions import ProcessingError
from streamspark.sinks import BatchingSink

from .secret_scan import find_secret, find_secret_in_tree

SECRET = "Hunter2-s3cr3t-f00"


class PasswordSink(BatchingSink):
    """A sink holding a password (as a database sink holds its connection's)."""

    def __init__(self, password: str) -> None:
        super().__init__()
        self.password = password

    def write(self, batch: Any) -> None:
        assert self.password == SECRET  # it reached the worker


def secret_settings(address: str) -> dict[str, Any]:
    """Application settings with credentials that still connect to a plaintext broker."""
    return {
        "broker_address": ConnectionConfig(
            bootstrap_servers=address,
            security_protocol="plaintext",
            sasl_mechanism="PLAIN",
            sasl_username="streamspark",
            sasl_password=SECRET,
        ),
        "producer_extra_config": {"ssl.key.password": SECRET},
        "consumer_extra_config": {"sasl.oauthbearer.client.secret": SECRET},
    }


@contextlib.contextmanager
def recorded_queries(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, list[Any]]]:
    """The source DataFrames loaded and the streaming queries started meanwhile."""
    from pyspark.sql.streaming.readwriter import DataStreamReader, DataStreamWriter

    seen: dict[str, list[Any]] = {"sources": [], "queries": []}
    real_load, real_start = DataStreamReader.load, DataStreamWriter.start

    def load(self: Any, *args: Any, **kwargs: Any) -> Any:
        seen["sources"].append(real_load(self, *args, **kwargs))
        return seen["sources"][-1]

    def start(self: Any, *args: Any, **kwargs: Any) -> Any:
        seen["queries"].append(real_start(self, *args, **kwargs))
        return seen["queries"][-1]

    monkeypatch.setattr(DataStreamReader, "load", load)
    monkeypatch.setattr(DataStreamWriter, "start", start)
    yield seen


def explained(seen: dict[str, list[Any]]) -> str:
    """``explain(extended=True)`` of every source DataFrame and query (all plans: parsed,
    analyzed, optimized, physical); the analyzed plan shows the source's options."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        for df in seen["sources"]:
            df.explain(True)
        for query in seen["queries"]:
            query.explain(True)
    return out.getvalue()


@contextlib.contextmanager
def app_log() -> Iterator[io.StringIO]:
    """Everything the ``streamspark`` loggers write in this process, DEBUG included, with tracebacks."""
    text = io.StringIO()
    handler = logging.StreamHandler(text)
    handler.setFormatter(logging.Formatter("%(levelname)s %(name)s %(message)s"))
    log = logging.getLogger("streamspark")
    level = log.level
    log.addHandler(handler)
    log.setLevel(logging.DEBUG)
    try:
        yield text
    finally:
        log.removeHandler(handler)
        log.setLevel(level)


def _pipeline(app: Any, shape: str, src: str, out: str) -> None:
    sdf = app.dataframe(app.topic(src, key_deserializer="str"))
    if shape == "stateful":
        sdf = sdf.apply(lambda v, state: {**v, "n": state.get("n", 0) + 1}, stateful=True)
    elif shape == "group_by":
        sdf = sdf.group_by("g").apply(lambda v, state: {**v, "n": state.get("n", 0) + 1}, stateful=True)
    elif shape == "window":
        sdf = sdf.tumbling_count_window(2).count().final()
    sdf.sink(PasswordSink(SECRET))
    sdf.to_topic(app.topic(out, key_serializer="str", value_serializer="json"))


SHAPES = {
    # shape: (pipeline, extra Application settings)
    "stateless": ("stateless", {}),  # runs fused inside the Kafka source
    "stateless-plain": ("stateless", {}),  # the same without fusing: source rows, then mapInArrow
    "stateless-exactly-once": ("stateless", {"processing_guarantee": "exactly-once"}),
    "stateful": ("stateful", {}),
    "group_by": ("group_by", {}),
    "window": ("window", {"processing_guarantee": "exactly-once"}),
}


@pytest.mark.parametrize("shape", list(SHAPES))
def test_credentials_show_in_no_plan_log_or_checkpoint(make_app, kafka, tmp_path, monkeypatch, shape):
    pipeline, settings = SHAPES[shape]
    if shape == "stateless-plain":
        monkeypatch.setattr(runner_module.QueryRunner, "strategies", Strategies(plain={"fused-source"}))
    src, out = kafka.new_topic(partitions=2), kafka.new_topic()
    kafka.produce(
        src,
        [
            {"value": json.dumps({"i": i, "g": f"g{i % 3}"}).encode(), "key": f"k{i % 4}".encode(), "partition": i % 2}
            for i in range(12)
        ],
    )
    app = make_app(**secret_settings(kafka.address), **settings)
    _pipeline(app, pipeline, src, out)
    with recorded_queries(monkeypatch) as seen, app_log() as log:
        # a count window of 2 closes once per key (4 keys of 3 messages)
        results = app.run(count=4 if pipeline == "window" else 12, timeout=60)
    assert results, "the run processed the input with these credentials"
    assert len(seen["sources"]) == len(seen["queries"]) == 1
    plans = explained(seen)
    assert "StreamingRelationV2" in plans and "topics=" in plans  # the source's options are shown, ...
    assert find_secret(plans, SECRET) == []  # ... the credentials are not
    assert find_secret(log.getvalue(), SECRET) == [], log.getvalue()
    assert find_secret_in_tree(tmp_path / "state", SECRET) == {}


def test_the_error_of_a_failing_run_shows_no_credentials(make_app, kafka, tmp_path, monkeypatch):
    src, out = kafka.new_topic(), kafka.new_topic()
    kafka.produce(src, [{"value": json.dumps({"i": i}).encode()} for i in range(3)])
    app = make_app(**secret_settings(kafka.address))
    sdf = app.dataframe(app.topic(src))
    sdf = sdf.apply(lambda v: v["i"] / (v["i"] - 1))  # fails at the second record
    sdf.sink(PasswordSink(SECRET))
    sdf.to_topic(app.topic(out))
    with recorded_queries(monkeypatch) as seen, app_log() as log, pytest.raises(ProcessingError) as info:
        app.run(count=3, timeout=60)
    error = info.value
    text = "".join(traceback.format_exception(type(error), error, error.__traceback__))
    assert "ZeroDivisionError" in text
    assert find_secret(text + repr(error) + str(getattr(error, "worker_traceback", "")), SECRET) == []
    assert find_secret(log.getvalue() + explained(seen), SECRET) == []


@pytest.mark.parametrize(
    "key",
    [
        "sasl.password",
        "sasl.jaas.config",
        "ssl.key.password",
        "ssl.key.pem",
        "sasl.oauthbearer.client.secret",
        "my.custom.secret",
    ],
)
def test_no_setting_reaches_the_source_options_or_the_plan(spark, key):
    # no broker needed: planning a streaming read asks the source its schema only
    value = f'org.example.Login required username="u" password="{SECRET}";' if key == "sasl.jaas.config" else SECRET
    config = {"bootstrap.servers": "127.0.0.1:1", key: value}
    plan = PipelinePlan(
        run_id="r",
        topics={},
        roots={},
        producer_config=dict(config),
        on_consumer_error=bool,
        on_processing_error=bool,
        on_producer_error=bool,
    )
    source = query_source(config, plan)
    spark.dataSource.register(source)
    options = source_options(["t"], "earliest", max_records_per_partition=10, request_timeout=5)
    df = spark.readStream.format(source.name()).options(**options).load()
    assert find_secret(explained({"sources": [df], "queries": []}) + json.dumps(options), SECRET) == []
    assert find_secret(repr(plan) + repr(source.private) + source.name(), SECRET) == []


def test_the_source_class_carries_the_settings_out_of_sight():
    private = SourcePrivate.of({"bootstrap.servers": "b:1", "sasl.password": SECRET})
    assert json.loads(private.kafka_config_json)["sasl.password"] == SECRET
    assert SECRET not in repr(private)
    # a class per query: two queries never share settings
    assert query_source({}).name() != query_source({}).name()
    with pytest.raises(Exception, match="query_source"):
        from streamspark.engine._kafka_source import KafkaDataSource

        KafkaDataSource({}).streamReader(None)


def test_secret_scan_finds_what_it_looks_for(tmp_path: Path):
    import gzip
    import pickle
    import zipfile

    payload = pickle.dumps({"producer": {"sasl.password": SECRET}})
    assert find_secret(payload, SECRET) == ["plain"]
    assert find_secret(b"x=" + __import__("base64").b64encode(payload) + b",", SECRET) == ["base64"]
    assert "zlib" in find_secret(gzip.compress(payload), SECRET)
    with zipfile.ZipFile(tmp_path / "a.zip", "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("inner/1.sst", payload)
    (tmp_path / "clean").write_bytes(b"nothing")
    assert find_secret_in_tree(tmp_path, SECRET) == {str(tmp_path / "a.zip"): ["zip:inner/1.sst"]}
