"""The typed report of a task (TaskSummary, TaskError, Stage) and the engine modules' doctests."""

from __future__ import annotations

import doctest
import importlib

import pytest

from streamspark.engine.summary import SUMMARY_ARROW, Stage, TaskError, TaskSummary


class _NeedsTwoArgs(Exception):
    def __init__(self, a: int, b: int) -> None:
        super().__init__(f"{a}/{b}")


def test_a_summary_survives_its_row_form():
    error = TaskError.of(KeyError("x"), Stage.PROCESSING, "t", 0, 5)
    summary = TaskSummary(
        spark_partition=2, input_count=10, output_count=7, skipped=1, collected=[{"a": 1}], sink_payloads={3: ["p"]}, error=error
    )
    batch = summary.as_batch()
    assert batch.schema == SUMMARY_ARROW and batch.num_rows == 1
    back = TaskSummary.from_row(batch.to_pylist()[0])
    assert back == summary
    assert isinstance(back.error.cause(), KeyError)  # type: ignore[union-attr]


def test_task_error_names_where_it_stopped():
    assert TaskError.of(ValueError("bad"), Stage.CONSUMER, "in", 1, 42).describe() == (
        'consumer failed at topic="in" partition=1 offset=42: ValueError: bad'
    )
    # a failed delivery names no input offset; a setup failure no record at all
    assert TaskError.of(ValueError("x"), Stage.PRODUCER, "out", 0, None).describe() == (
        'producer failed at topic="out" partition=0: ValueError: x'
    )
    assert TaskError.of(ValueError("x"), Stage.SETUP, None, None, None).describe() == "setup failed: ValueError: x"


def test_an_exception_the_driver_cannot_rebuild_travels_as_text():
    error = TaskError.of(_NeedsTwoArgs(1, 2), Stage.SINK, None, None, None)
    assert error.exception is None and error.cause() is None
    assert (error.type, error.message) == ("_NeedsTwoArgs", "1/2")
    assert "_NeedsTwoArgs" in error.traceback


def test_an_exception_class_of_the_program_comes_back_as_itself():
    """A class no worker can import (defined in the program's script, sent to Spark's workers
    by value) travels with cloudpickle and is the same class on the driver, so
    ``except TheirError:`` around ``app.run()`` catches it."""

    class TheirError(Exception):
        pass

    error = TaskError.of(TheirError("boom"), Stage.PROCESSING, "t", 0, 1)
    cause = error.cause()
    assert type(cause) is TheirError and str(cause) == "boom"


def test_stages_compare_as_their_words():
    assert Stage.GROUP_BY == "group_by" and str(Stage.STATE) == "state"
    with pytest.raises(ValueError):
        Stage("nowhere")


@pytest.mark.parametrize(
    "name",
    [
        "streamspark.engine.summary",
        "streamspark.engine.allocators",
        "streamspark.engine.bucketing",
        "streamspark.engine.count_budget",
        "streamspark.engine.repartition",
        "streamspark.engine.strategies",
        "streamspark.engine.driver_preload",
        "streamspark.engine.fork_server",
        "streamspark.engine.lag",
        "streamspark.engine.callbacks",
        "streamspark.engine.task_entry",
        "streamspark.engine._eos",
        "streamspark.engine.rocksdb_library",
        "streamspark.engine.local_file_system",
        "streamspark.engine._env",
        "streamspark.engine.session",
        "streamspark.state.store",
        "streamspark.state.blob_codec",
        "streamspark.state.ttl_count",
    ],
)
def test_module_doctests(name):
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0
