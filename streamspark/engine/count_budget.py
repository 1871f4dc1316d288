"""How many records the next micro-batch may read during ``app.run(count=N)``.

Quix Streams processes a message at a time and stops after exactly N outputs; a micro-batch
produces all the outputs of the records it read. So while a run has a ``count``, the driver
tells the Kafka source (whose planning runs in another process on the driver's host) how many
records the next micro-batch may take, through a small file: the outputs still missing, over
the outputs per input record seen so far (before any output, one per branch end). A pipeline whose
records give one output each then stops after exactly N outputs; one that drops records reads a
little more each time (it can overshoot by the outputs of the last micro-batch's extra
records); while none has given an output (windows), each budget is four times the last. The
first budget counts the branch ends a record reaches (``PipelinePlan.outputs_per_record``): a
dataframe split into two branches reads N/2 records first, and writes N outputs, as Quix
Streams does. A pipeline that ``expand``s first reads one record, which tells how many outputs
a record gives (an ``expand`` giving many outputs per record would otherwise write that many
times N from its first micro-batch). A micro-batch once planned is never re-planned from the file
(Spark's offset log fixes its ranges), so a replay after a crash is unchanged.

>>> budget = CountBudget(10)
>>> read_budget(budget.path)
10
>>> budget.update(inputs=10, outputs=5)  # half the records gave an output: 5 left, read 10
>>> read_budget(budget.path)
10
>>> budget.update(inputs=20, outputs=5)  # one output per 4 records so far: 5 left, read 20
>>> read_budget(budget.path)
20
>>> budget.close(); read_budget(budget.path) is None
True
>>> two_branches = CountBudget(10, outputs_per_record=2)  # two outputs a record at first
>>> read_budget(two_branches.path)
5
>>> two_branches.close()
>>> expanding = CountBudget(10, outputs_per_record=None)  # unknown: one record first
>>> read_budget(expanding.path)
1
>>> expanding.close()
"""

from __future__ import annotations

import logging
import math
import os
import shutil
import tempfile
from pathlib import Path
from typing import Optional

__all__ = ("CountBudget", "read_budget", "next_budget")

logger = logging.getLogger(__name__)

#: how much more a micro-batch may read than the last one while no record has given an output
GROWTH = 4
#: the largest budget (the per-partition caps bound a micro-batch anyway)
MAX_BUDGET = 1 << 40


def next_budget(count: int, inputs: int, outputs: int, last: int) -> int:
    """Records the next micro-batch may read, after ``inputs`` records gave ``outputs`` outputs
    of the ``count`` the run waits for; ``last`` is the budget of the micro-batch before.

    >>> next_budget(100, inputs=0, outputs=0, last=100)  # nothing read yet
    100
    >>> next_budget(100, inputs=100, outputs=100, last=100)  # done: at least a record
    1
    >>> next_budget(100, inputs=40, outputs=80, last=40)  # two outputs a record: 10 more records
    10
    >>> next_budget(100, inputs=100, outputs=0, last=100)  # no output yet (windows): read more
    400
    >>> next_budget(1, inputs=10**15, outputs=0, last=MAX_BUDGET) == MAX_BUDGET  # bounded
    True
    """
    remaining = count - outputs
    if remaining <= 0:
        return 1
    if inputs == 0:
        return last
    if outputs == 0:
        return min(last * GROWTH, MAX_BUDGET)
    return min(max(1, math.ceil(remaining * inputs / outputs)), MAX_BUDGET)


class CountBudget:
    """The driver's side: the budget file of one run with ``count`` (a temporary folder of its own)."""

    def __init__(self, count: int, outputs_per_record: Optional[int] = 1) -> None:
        """:param outputs_per_record: the outputs a record gives at most before any is seen
        (``PipelinePlan.outputs_per_record``); None: not known (an ``expand``), so the first
        micro-batch reads one record."""
        self.count = count
        self._folder = tempfile.mkdtemp(prefix="streamspark-count-")
        self.path = os.path.join(self._folder, "budget")
        self._last = 1 if outputs_per_record is None else max(1, math.ceil(count / max(1, outputs_per_record)))
        self._write(self._last)

    def _write(self, budget: int) -> None:
        tmp = self.path + ".tmp"
        Path(tmp).write_text(str(budget))
        os.replace(tmp, self.path)  # the source never reads half a number

    def update(self, inputs: int, outputs: int) -> None:
        """After a micro-batch: the run has read ``inputs`` records and produced ``outputs``.
        A budget that cannot be written is logged: the micro-batch stays good, and the next
        one reads by the last budget written."""
        self._last = next_budget(self.count, inputs, outputs, self._last)
        try:
            self._write(self._last)
        except OSError as exc:
            logger.warning("Could not write the record budget of run(count=%d): %s", self.count, exc)

    def close(self) -> None:
        shutil.rmtree(self._folder, ignore_errors=True)


def read_budget(path: str) -> Optional[int]:
    """The source's side: the budget in the file, or None (no file: no bound)."""
    try:
        return max(1, int(Path(path).read_text()))
    except (OSError, ValueError):
        return None
