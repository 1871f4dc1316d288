"""How a running query reports its micro-batches in the log without flooding it.

A pipeline that keeps up with its topics runs a micro-batch every fraction of a second: a line
per micro-batch (and one for the consumer lag after it) at INFO would be thousands of lines an
hour. :class:`BatchLog` writes a micro-batch at INFO at most every ``interval`` seconds, with
the totals of the micro-batches since the previous INFO line; every micro-batch still gets its
own line at DEBUG. The first micro-batch of a run is always at INFO.

>>> import logging
>>> clock = iter([0.0, 1.0, 2.0, 12.0]).__next__
>>> log = BatchLog(logging.getLogger("example"), interval=10.0, clock=clock)
>>> [log.batch(i, 100, 100, 0, 0.2) for i in range(4)]   # INFO, DEBUG, DEBUG, INFO
['info', 'debug', 'debug', 'info']
"""

from __future__ import annotations

import logging
import time
from typing import Callable, Optional

__all__ = ("BatchLog", "INTERVAL", "Throttle")

#: seconds between two INFO lines about micro-batches (and two about the consumer lag)
INTERVAL = 10.0


class Throttle:
    """True at most once every ``interval`` seconds (the first call is always due).

    >>> times = iter([0.0, 3.0, 10.0]).__next__
    >>> throttle = Throttle(10.0, clock=times)
    >>> [throttle.due(), throttle.due(), throttle.due()]
    [True, False, True]
    """

    def __init__(self, interval: float = INTERVAL, clock: Callable[[], float] = time.monotonic) -> None:
        self.interval = interval
        self.clock = clock
        self._last: Optional[float] = None

    def due(self) -> bool:
        now = self.clock()
        if self._last is not None and now - self._last < self.interval:
            return False
        self._last = now
        return True


class BatchLog:
    """The log lines of a query's micro-batches (see the module's note)."""

    def __init__(self, logger: logging.Logger, interval: float = INTERVAL, clock: Callable[[], float] = time.monotonic) -> None:
        self.logger = logger
        self.throttle = Throttle(interval, clock)
        self._since = [0, 0, 0, 0]  # batches, in, out, skipped since the last INFO line

    def batch(self, batch_id: int, inputs: int, outputs: int, skipped: int, seconds: float) -> str:
        """Log one micro-batch; returns the level it was logged at (``"info"`` or ``"debug"``)."""
        since = self._since
        since[0] += 1
        since[1] += inputs
        since[2] += outputs
        since[3] += skipped
        line = "Batch %d: %d in, %d out, %d skipped in %.2fs"
        args: tuple[object, ...] = (batch_id, inputs, outputs, skipped, seconds)
        if not self.throttle.due():
            self.logger.debug(line, *args)
            return "debug"
        if since[0] > 1:
            line += " (%d micro-batches since the last report: %d in, %d out, %d skipped)"
            args += tuple(since)
        self.logger.info(line, *args)
        self._since = [0, 0, 0, 0]
        return "info"
