"""The ``Source`` run loop's connect callbacks, run in this process with a recording producer."""

from __future__ import annotations

import pytest

from streamspark.sources import Source

from ..conftest import run_in_process


class Numbers(Source):
    def run(self) -> None:
        for n in range(3):
            self.produce(value=self.serialize(value=n).value)


def test_a_raising_success_callback_goes_to_the_failure_callback_and_the_source_runs():
    """As Quix Streams: an exception of the success callback is the failure callback's to
    handle; when it returns, the source runs."""
    seen = []

    def bad_success():
        raise RuntimeError("logging failed")

    source = Numbers("numbers", on_client_connect_success=bad_success, on_client_connect_failure=seen.append)
    assert [m["value"] for m in run_in_process(source)] == [b"0", b"1", b"2"]
    assert [str(e) for e in seen] == ["logging failed"]


def test_by_default_a_raising_success_callback_stops_the_source():
    def bad_success():
        raise RuntimeError("logging failed")

    with pytest.raises(RuntimeError, match="logging failed"):
        run_in_process(Numbers("numbers", on_client_connect_success=bad_success))
