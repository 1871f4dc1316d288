from __future__ import annotations

import pytest

from streamspark.models import MessageTimestamp, TimestampType


@pytest.mark.parametrize("raw", [0, TimestampType.TIMESTAMP_NOT_AVAILABLE])
def test_not_available_is_accepted_without_milliseconds(raw):
    ts = MessageTimestamp.create(raw, -1)
    assert (ts.type, ts.milliseconds) == (TimestampType.TIMESTAMP_NOT_AVAILABLE, None)


@pytest.mark.parametrize("raw, kind", [(1, TimestampType.TIMESTAMP_CREATE_TIME), (2, TimestampType.TIMESTAMP_LOG_APPEND_TIME)])
def test_create_and_log_append_times_keep_their_milliseconds(raw, kind):
    ts = MessageTimestamp.create(raw, 1_700_000_000_000)
    assert (ts.type, ts.milliseconds) == (kind, 1_700_000_000_000)


def test_an_unknown_type_is_refused():
    with pytest.raises(ValueError):
        MessageTimestamp.create(3, 1)
