"""Per-key silence detection: ``StreamTimeoutTracker`` (standard library only, usable by any sink).

A *stream* is one message key. The tracker remembers when each key was last seen and,
once a key has been silent for ``stream_timeout_ms``, evicts it and calls
``on_stream_timeout(key)`` exactly once for that silence period. A key that sends again
afterwards is a new stream with a new baseline.

>>> fired = []
>>> now = [0]
>>> tracker = StreamTimeoutTracker(1_000, fired.append, clock_ms=lambda: now[0])
>>> tracker.touch(b"sensor-a"); tracker.touch(b"sensor-b")
>>> now[0] = 900; tracker.touch(b"sensor-b")
>>> now[0] = 1_000; tracker.check_now()
[b'sensor-a']
>>> fired
[b'sensor-a']

Semantics (those of the reference's tracker):

- enabled only when ``stream_timeout_ms`` is a positive ``int`` and ``on_stream_timeout``
  is callable; otherwise every method is a no-op, no dict is kept and no thread started;
- fire-and-evict, in this order: the key is evicted, the callback is called, an INFO line
  ``Stream '<key>' timed out (silence N ms >= threshold M ms)`` is logged;
- a TTL safety sweep evicts, without firing and with a WARNING, entries silent for at least
  ``3 × stream_timeout_ms`` (only reachable when checks could not run in time);
- checks run on a daemon thread (:meth:`start`) every ``max(100, min(1000, threshold // 5))``
  ms, and whenever the owner calls :meth:`check_now` (a sink: after each flush).

The reference says both that callback exceptions "are logged and swallowed" and that the
callback runs on the thread that drives the consumer. We resolve it this way: a raising
callback is logged at ERROR with its traceback and the firing still counts (the key stays
evicted and the INFO line is written), and it never reaches the caller of ``check_now`` —
so a broken alert can never fail a micro-batch. In streamspark the callback runs in the
driver (the tracker thread or the thread finishing a micro-batch), never in a Spark task;
it should still return promptly, as the checks of the other keys wait for it.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any, Callable, Hashable, Optional

__all__ = ("StreamTimeoutTracker", "check_interval_for")

_logger = logging.getLogger(__name__)

#: entries silent this many thresholds long are swept without firing
TTL_FACTOR = 3


def check_interval_for(stream_timeout_ms: int) -> int:
    """The background check cadence for a threshold: ``max(100, min(1000, threshold // 5))``.

    >>> check_interval_for(60_000), check_interval_for(2_000), check_interval_for(100)
    (1000, 400, 100)
    """
    return max(100, min(1000, stream_timeout_ms // 5))


def _wall_clock_ms() -> int:
    return time.time_ns() // 1_000_000


class StreamTimeoutTracker:
    """Detects message keys that went silent and calls back once per silence period.

    :param stream_timeout_ms: the silence threshold in milliseconds (one for all keys);
        ``None``, ``0``, a negative number or a non-int disables the tracker.
    :param on_stream_timeout: called with the raw key (as given to :meth:`touch`).
    :param check_interval_ms: override the background cadence (tests, tuning).
    :param thread_name: the name of the background thread.
    :param logger: where the INFO/WARNING/ERROR lines go.
    :param clock_ms: the clock in epoch milliseconds (wall clock by default, so that
        :meth:`snapshot`/:meth:`restore` work across restarts).
    """

    def __init__(
        self,
        stream_timeout_ms: Optional[int],
        on_stream_timeout: Optional[Callable[[Any], Any]],
        check_interval_ms: Optional[int] = None,
        thread_name: str = "streamspark-stream-timeout",
        logger: Optional[logging.Logger] = None,
        clock_ms: Callable[[], int] = _wall_clock_ms,
    ) -> None:
        self._logger = logger or _logger
        self.enabled = (
            isinstance(stream_timeout_ms, int)
            and not isinstance(stream_timeout_ms, bool)
            and stream_timeout_ms > 0
            and callable(on_stream_timeout)
        )
        if not self.enabled and (stream_timeout_ms or on_stream_timeout is not None):
            self._logger.warning(
                "Silence detection is disabled: it needs stream_timeout_ms as a positive int "
                "and a callable on_stream_timeout (got %r and %r)",
                stream_timeout_ms,
                on_stream_timeout,
            )
        self.stream_timeout_ms: int = stream_timeout_ms if self.enabled else 0  # type: ignore[assignment]
        self._callback = on_stream_timeout
        self.check_interval_ms = (check_interval_ms or check_interval_for(self.stream_timeout_ms)) if self.enabled else 0
        self._thread_name = thread_name
        #: the clock (epoch ms) that stamps what is seen; a copy for another process reads the wall clock
        self.clock_ms = clock_ms
        #: key -> last seen (epoch ms); None while disabled (nothing is allocated)
        self._last_seen: Optional[dict[Hashable, int]] = {} if self.enabled else None
        self._lock = threading.Lock() if self.enabled else None
        self._fire_lock = threading.Lock() if self.enabled else None
        self._stop = threading.Event()
        self._thread: Optional[threading.Thread] = None

    # --- activity ------------------------------------------------------------------------
    def touch(self, key: Any, at_ms: Optional[int] = None, **_context: Any) -> None:
        """Record that ``key`` was seen (now, or at ``at_ms``). Unhashable keys are ignored."""
        if self._last_seen is None:
            return
        when = self.clock_ms() if at_ms is None else at_ms
        try:
            with self._lock:  # type: ignore[union-attr]
                if when > self._last_seen.get(key, -1):
                    self._last_seen[key] = when
        except TypeError:
            self._logger.debug("Silence detection skips an unhashable key %r", key)

    def touch_many(self, seen: dict[Any, int]) -> None:
        """Record several keys at once: ``{key: last seen epoch ms}``."""
        if self._last_seen is None:
            return
        for key, when in seen.items():
            self.touch(key, at_ms=when)

    @property
    def tracked(self) -> int:
        """How many keys are tracked now."""
        return len(self._last_seen) if self._last_seen is not None else 0

    # --- checks --------------------------------------------------------------------------
    def check_now(self) -> list[Any]:
        """Fire for every key silent for at least the threshold; return the keys fired."""
        if self._last_seen is None:
            return []
        threshold = self.stream_timeout_ms
        with self._fire_lock:  # type: ignore[union-attr]
            now = self.clock_ms()
            due: list[tuple[Any, int]] = []
            swept: list[tuple[Any, int]] = []
            with self._lock:  # type: ignore[union-attr]
                for key, seen in list(self._last_seen.items()):
                    silence = now - seen
                    if silence >= TTL_FACTOR * threshold:
                        del self._last_seen[key]
                        swept.append((key, silence))
                    elif silence >= threshold:
                        del self._last_seen[key]  # evict first: a raising callback still counts
                        due.append((key, silence))
            for key, silence in swept:
                self._logger.warning(
                    "Stream %r evicted without firing: silent %d ms, past the %d ms safety TTL",
                    _display(key),
                    silence,
                    TTL_FACTOR * threshold,
                )
            for key, silence in due:
                try:
                    if self._callback is None:
                        raise RuntimeError("this tracker is a pickled copy without its callback")
                    self._callback(key)
                except Exception:
                    self._logger.exception("on_stream_timeout failed for stream %r", _display(key))
                self._logger.info("Stream '%s' timed out (silence %d ms >= threshold %d ms)", _display(key), silence, threshold)
            return [key for key, _ in due]

    # --- background thread ---------------------------------------------------------------
    def start(self) -> None:
        """Start the background check thread (no-op when disabled or already running)."""
        if not self.enabled or (self._thread is not None and self._thread.is_alive()):
            return
        self._stop.clear()
        self._thread = threading.Thread(target=self._loop, name=self._thread_name, daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        """Stop the background thread and wait for it."""
        self._stop.set()
        thread, self._thread = self._thread, None
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def _loop(self) -> None:
        interval = self.check_interval_ms / 1000
        while not self._stop.wait(interval):
            try:
                self.check_now()
            except Exception:  # never let the thread die
                self._logger.exception("Silence check failed")

    # --- durability ----------------------------------------------------------------------
    def snapshot(self) -> dict[Any, int]:
        """A copy of ``{key: last seen epoch ms}`` (for durable modes)."""
        if self._last_seen is None:
            return {}
        with self._lock:  # type: ignore[union-attr]
            return dict(self._last_seen)

    def restore(self, last_seen: dict[Any, int]) -> None:
        """Resume tracking from a :meth:`snapshot` (newer activity wins)."""
        self.touch_many(last_seen)

    def __getstate__(self) -> dict[str, Any]:
        # A copy is for another process (a Spark worker needs only ``enabled``): it starts with
        # no keys and no callback (callbacks often hold clients and locks that cannot travel).
        state = self.__dict__.copy()
        state["_callback"] = None
        state["clock_ms"] = _wall_clock_ms
        state["_lock"] = state["_fire_lock"] = None
        state["_stop"] = None
        state["_thread"] = None
        state["_last_seen"] = {} if self.enabled else None
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        if self.enabled:
            self._lock = threading.Lock()
            self._fire_lock = threading.Lock()
        self._stop = threading.Event()


def _display(key: Any) -> str:
    if isinstance(key, bytes):
        return key.decode("utf-8", errors="replace")
    return str(key)
