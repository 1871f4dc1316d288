"""A program's callbacks and prints, run by Spark's worker processes, reach the program's process."""

from __future__ import annotations

import json
import logging
import multiprocessing
from typing import Any

import pytest

from streamspark.engine.callbacks import CallbackServer, DriverCall, ForwardedStdout, unwrap
from streamspark.exceptions import ProcessingError

from ..conftest import json_messages


# --- the channel on its own (a forked process stands for a Spark worker) -------------------
def _call_in_child(call: DriverCall, args: tuple[Any, ...], out: Any) -> None:
    try:
        out.send(("ok", call(*args)))
    except Exception as exc:
        out.send(("raise", repr(exc)))


def _run_in_child(call: DriverCall, *args: Any) -> tuple[str, Any]:
    ctx = multiprocessing.get_context("fork")
    parent, child = ctx.Pipe()
    proc = ctx.Process(target=_call_in_child, args=(call, args, child))
    proc.start()
    result = parent.recv()
    proc.join(10)
    return result


def test_a_call_from_another_process_runs_once_in_the_driver():
    seen: list[Any] = []
    server = CallbackServer()
    try:
        call = server.wrap(lambda exc, row, logger: seen.append((repr(exc), row)) or row == "skip", "on_processing_error")
        assert _run_in_child(call, ValueError("boom"), "skip", logging.getLogger("x")) == ("ok", True)
        assert _run_in_child(call, ValueError("again"), "stop", None) == ("ok", False)
        assert seen == [("ValueError('boom')", "skip"), ("ValueError('again')", "stop")]
        assert server.calls == 2
    finally:
        server.close()


def test_an_exception_of_the_callback_is_raised_in_the_caller():
    def callback(exc: Exception, row: Any, logger: Any) -> bool:
        raise KeyError("from the callback")

    server = CallbackServer()
    try:
        kind, text = _run_in_child(server.wrap(callback, "on_consumer_error"), ValueError("x"), None, None)
    finally:
        server.close()
    assert (kind, text) == ("raise", "KeyError('from the callback')")


def test_unreachable_driver_runs_the_callback_in_place_with_a_warning(caplog):
    server = CallbackServer()
    call = server.wrap(lambda *args: "ran", "on_producer_error")
    server.close()
    call.driver_pid = -1  # as if unpickled in a worker
    with caplog.at_level(logging.WARNING, logger="streamspark.engine.callbacks"):
        assert call(1, 2, 3) == "ran"
    assert "on_producer_error runs in the Spark worker process" in caplog.text


def test_unpicklable_arguments_run_in_place():
    server = CallbackServer()
    try:
        call = server.wrap(lambda exc, row, logger: row(), "on_processing_error")
        call.driver_pid = -1
        # a lambda cannot be pickled: the call stays in this process
        assert call(ValueError(), lambda: "local", None) == "local"
        assert server.calls == 0
    finally:
        server.close()


def test_unwrap_gives_the_program_callback_back():
    def callback(*args: Any) -> bool:
        return True

    server = CallbackServer()
    try:
        call = server.wrap(callback, "on_late")
        assert unwrap(call) is callback
        assert unwrap(server.wrap(call, "on_late")) is callback  # no wrapper of a wrapper
        assert unwrap(callback) is callback
    finally:
        server.close()


def test_forwarded_stdout_sends_whole_chunks():
    sent: list[str] = []
    out = ForwardedStdout(sent.append, interval=3600)  # type: ignore[arg-type]
    print("a", file=out)
    print("b", file=out)
    assert sent == []  # buffered until the interval or the end of the task
    out.flush()
    assert sent == ["a\nb\n"]


# --- on real Spark --------------------------------------------------------------------------
def test_error_callbacks_run_in_the_program_process(make_app, kafka):
    """A callback appending to the program's list sees every skipped record (the test a Quix
    Streams user writes), on a real Spark run."""
    topic = kafka.new_topic()
    kafka.produce(
        topic,
        [
            {"value": json.dumps({"d": 1}).encode()},
            {"value": b"{not json"},
            {"value": json.dumps({"d": 0}).encode()},
            {"value": json.dumps({"d": 2}).encode()},
        ],
    )
    consumer_errors: list[Any] = []
    processing_errors: list[Any] = []

    def on_consumer_error(exc: Exception, message: Any, logger: Any) -> bool:
        consumer_errors.append((type(exc).__name__, message.offset(), message.value()))
        return True

    def on_processing_error(exc: Exception, row: Any, logger: Any) -> bool:
        processing_errors.append((type(exc).__name__, row.value, row.offset))
        return True

    app = make_app(on_consumer_error=on_consumer_error, on_processing_error=on_processing_error)
    app.dataframe(app.topic(topic)).apply(lambda v: {"r": 10 // v["d"]})
    assert app.run(count=2, timeout=60) == [{"r": 10}, {"r": 5}]
    assert [(offset, value) for _, offset, value in consumer_errors] == [(1, b"{not json")]
    assert processing_errors == [("ZeroDivisionError", {"d": 0}, 2)]


def test_a_callback_that_raises_stops_the_run(make_app, kafka):
    topic = kafka.new_topic()
    kafka.produce(topic, json_messages([{"d": 0}]))

    def on_processing_error(exc: Exception, row: Any, logger: Any) -> bool:
        raise RuntimeError("callback refused")

    app = make_app(on_processing_error=on_processing_error)
    app.dataframe(app.topic(topic)).apply(lambda v: 1 // v["d"])
    with pytest.raises(ProcessingError, match="callback refused"):
        app.run(count=1, timeout=60)


def test_print_in_steps_reaches_the_program_stdout(make_app, kafka, capsys):
    topic = kafka.new_topic()
    kafka.produce(topic, json_messages([{"i": 1}, {"i": 2}]))
    app = make_app()
    sdf = app.dataframe(app.topic(topic))
    sdf = sdf.update(lambda v: print("seen", v["i"]))
    sdf.print()
    assert app.run(count=2, timeout=60) == [{"i": 1}, {"i": 2}]
    out = capsys.readouterr().out
    assert "seen 1" in out and "seen 2" in out
    assert out.index("seen 1") < out.index("seen 2")
    assert "'i': 2" in out  # sdf.print()


def test_on_late_runs_in_the_program_process(make_app, kafka):
    topic = kafka.new_topic()
    kafka.produce(
        topic,
        [
            {"value": b"1", "key": b"a", "timestamp": 10_000},
            {"value": b"1", "key": b"a", "timestamp": 25_000},
            {"value": b"1", "key": b"a", "timestamp": 1_000},  # late for [0, 10 s)
        ],
    )
    late: list[Any] = []

    def on_late(
        value: Any,
        key: Any,
        timestamp_ms: int,
        late_by_ms: int,
        start: int,
        end: int,
        name: str,
        topic: Any,
        partition: Any,
        offset: Any,
    ) -> bool:
        late.append((value, key, timestamp_ms, start, end, offset))
        return False

    app = make_app()
    sdf = app.dataframe(app.topic(topic))
    sdf.tumbling_window(10_000, grace_ms=0, on_late=on_late).count().current()
    # the late record gives no output: the run ends on its timeout once all three were read
    app.run(timeout=3)
    assert late == [(1, b"a", 1_000, 0, 10_000, 2)]
