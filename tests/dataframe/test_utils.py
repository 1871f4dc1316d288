from __future__ import annotations

from datetime import timedelta

import pytest

from streamspark.dataframe.utils import ensure_milliseconds


@pytest.mark.parametrize(
    "delta, ms",
    [(5, 5), (0, 0), (timedelta(seconds=2), 2000), (timedelta(microseconds=1500), 2), (timedelta(microseconds=1499), 1)],
)
def test_ensure_milliseconds(delta, ms):
    assert ensure_milliseconds(delta) == ms


@pytest.mark.parametrize("delta", ["5", 1.5, None, True])
def test_ensure_milliseconds_refuses_other_types(delta):
    with pytest.raises(TypeError, match="Timedelta must be either"):
        ensure_milliseconds(delta)
