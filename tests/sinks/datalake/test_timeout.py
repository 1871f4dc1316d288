"""StreamTimeoutTracker: the reference's semantics, with an injected clock (and one real thread)."""

from __future__ import annotations

import logging
import threading
import time

import pytest

from streamspark.sinks.datalake import StreamTimeoutTracker
from streamspark.sinks.datalake.timeout import check_interval_for


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000

    def __call__(self) -> int:
        return self.now


def make(threshold=1_000, callback=None, **kwargs):
    clock = Clock()
    fired: list = []
    tracker = StreamTimeoutTracker(threshold, callback or fired.append, clock_ms=clock, **kwargs)
    return tracker, clock, fired


@pytest.mark.parametrize("threshold, expected", [(60_000, 1000), (5_000, 1000), (2_000, 400), (600, 120), (400, 100), (1, 100)])
def test_check_cadence(threshold, expected):
    assert check_interval_for(threshold) == expected
    tracker, _, _ = make(threshold)
    assert tracker.check_interval_ms == expected


@pytest.mark.parametrize(
    "threshold, callback",
    [
        (None, print),
        (0, print),
        (-5, print),
        (1.5, print),
        (True, print),
        ("100", print),
        (1000, None),
        (1000, "nope"),
    ],
)
def test_disabled_combinations_allocate_nothing(threshold, callback):
    tracker = StreamTimeoutTracker(threshold, callback)
    assert not tracker.enabled
    assert tracker._last_seen is None and tracker._lock is None
    tracker.touch(b"k")
    tracker.start()
    assert tracker._thread is None and not tracker.running
    assert tracker.check_now() == [] and tracker.tracked == 0


def test_fires_once_per_silence_and_only_for_the_silent_key(caplog):
    tracker, clock, fired = make(1_000)
    tracker.touch(b"sensor-a")
    tracker.touch(b"sensor-b")
    clock.now += 600
    tracker.touch(b"sensor-b")
    clock.now += 399
    assert tracker.check_now() == []  # 999 ms: not yet
    clock.now += 1
    with caplog.at_level(logging.INFO, logger="streamspark"):
        assert tracker.check_now() == [b"sensor-a"]
    assert fired == [b"sensor-a"]
    assert "Stream 'sensor-a' timed out (silence 1000 ms >= threshold 1000 ms)" in caplog.text
    clock.now += 100
    assert tracker.check_now() == []  # evicted: no second firing for the same silence
    clock.now += 500
    assert tracker.check_now() == [b"sensor-b"]
    assert fired == [b"sensor-a", b"sensor-b"]
    assert tracker.tracked == 0


def test_a_key_that_comes_back_is_a_new_stream():
    tracker, clock, fired = make(1_000)
    tracker.touch("k")
    clock.now += 1_000
    tracker.check_now()
    tracker.touch("k")  # new baseline
    clock.now += 999
    assert tracker.check_now() == []
    clock.now += 1
    assert tracker.check_now() == ["k"]
    assert fired == ["k", "k"]


def test_raw_keys_of_any_type_are_passed_through():
    tracker, clock, fired = make(10)
    for key in (b"\x00\xff", "s", 7, None):
        tracker.touch(key)
    clock.now += 10
    tracker.check_now()
    assert sorted(fired, key=repr) == sorted([b"\x00\xff", "s", 7, None], key=repr)


def test_ttl_sweep_evicts_without_firing(caplog):
    tracker, clock, fired = make(1_000)
    tracker.touch(b"old")
    tracker.touch(b"recent")
    clock.now += 3_000 - 1
    tracker.touch(b"recent")
    clock.now += 1  # old: exactly 3x the threshold
    with caplog.at_level(logging.WARNING, logger="streamspark"):
        assert tracker.check_now() == []
    assert fired == []
    assert tracker.snapshot() == {b"recent": clock.now - 1}
    assert "evicted without firing" in caplog.text


def test_raising_callback_is_logged_and_still_counts(caplog):
    calls = []

    def boom(key):
        calls.append(key)
        raise RuntimeError("alert service down")

    tracker, clock, _ = make(1_000, callback=boom)
    tracker.touch(b"a")
    clock.now += 1_000
    with caplog.at_level(logging.INFO, logger="streamspark"):
        assert tracker.check_now() == [b"a"]  # the error does not reach the caller
    assert "alert service down" in caplog.text and "timed out" in caplog.text
    clock.now += 5_000
    assert tracker.check_now() == []
    assert calls == [b"a"]


def test_background_thread_fires_without_any_flush():
    fired = []
    done = threading.Event()
    tracker = StreamTimeoutTracker(300, lambda k: (fired.append((k, time.monotonic())), done.set()))
    assert tracker.check_interval_ms == 100
    tracker.touch(b"quiet")
    t0 = time.monotonic()
    tracker.start()
    try:
        assert tracker.running and tracker._thread.daemon
        assert done.wait(5)
    finally:
        tracker.stop()
    assert not tracker.running
    assert fired[0][0] == b"quiet"
    assert 0.2 <= fired[0][1] - t0 < 2.0  # threshold (0.3 s) + at most a few check periods


def test_snapshot_restore_and_pickle():
    import pickle

    tracker, clock, _ = make(1_000)
    tracker.touch(b"a")
    tracker_with_lock = StreamTimeoutTracker(1_000, lambda k, lock=threading.Lock(): None)
    assert pickle.loads(pickle.dumps(tracker_with_lock)).enabled  # an unpicklable callback stays behind
    copy = pickle.loads(pickle.dumps(tracker))
    assert copy.enabled and copy.tracked == 0  # a copy starts empty (per-process state)
    copy.clock_ms = clock
    copy.restore(tracker.snapshot())
    assert copy.snapshot() == {b"a": clock.now}
    copy.touch(b"a", at_ms=clock.now - 10)  # older activity does not move the baseline back
    assert copy.snapshot() == {b"a": clock.now}
