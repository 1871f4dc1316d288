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
