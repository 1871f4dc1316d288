"""Pipeline plans built without a broker or Spark, for tests of the engine's driver side."""

from __future__ import annotations

from typing import Any, Callable

from streamspark import Application
from streamspark.engine._plan import PipelinePlan


def _never(*args: Any) -> bool:
    return False


def plan_of(build: Callable[[Any, Any], Any] = lambda app, sdf: None) -> PipelinePlan:
    """The plan of one ``readings`` topic whose dataframe ``build(app, sdf)`` extends."""
    app = Application(broker_address="127.0.0.1:1", consumer_group="plans")
    topic = app.topic("readings")
    sdf = app.dataframe(topic)
    build(app, sdf)
    return PipelinePlan(
        run_id="r",
        topics={topic.name: topic},
        roots={topic.name: sdf.stream.root()},
        producer_config={},
        on_consumer_error=_never,
        on_processing_error=_never,
        on_producer_error=_never,
    )


def query_runner(plan: PipelinePlan | None = None) -> Any:
    """A ``QueryRunner`` of ``plan`` (default: :func:`plan_of`'s) that has not started a query:
    no broker answers at its address and no Spark session is asked for."""
    from streamspark.engine.runner import QueryRunner

    return QueryRunner(
        plan=plan if plan is not None else plan_of(),
        kafka_config={"bootstrap.servers": "127.0.0.1:1"},
        auto_offset_reset="earliest",
        checkpoint_dir="/nonexistent",
        spark_master="local[1]",
        spark_conf={},
        trigger_interval=0.5,
        max_records_per_partition=1000,
        request_timeout=1.0,
        sinks_by_node={},
    )
