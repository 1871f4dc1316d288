from __future__ import annotations

import csv
import pickle

import pytest

from streamspark.sinks import BatchingSink, CSVSink, ListSink, SinkBackpressureError, SinkBatch


def test_sink_batch_chunks():
    b = SinkBatch("t", 1)
    assert b.empty()
    for i in range(7):
        b.append(value=i, key=None, timestamp=i, headers=None, offset=100 + i)
    assert (b.size, b.start_offset, b.topic, b.partition) == (7, 100, "t", 1)
    assert [[it.value for it in c] for c in b.iter_chunks(3)] == [[0, 1, 2], [3, 4, 5], [6]]


@pytest.mark.parametrize("n", [0, -1])
def test_sink_batch_chunks_of_less_than_one_are_refused(n):
    b = SinkBatch("t", 0)
    b.append(value=1, key=None, timestamp=0, headers=None, offset=0)
    with pytest.raises(ValueError, match="n must be at least one"):
        list(b.iter_chunks(n))


def test_sink_batch_chunks_are_tuples():
    b = SinkBatch("t", 0)
    for i in range(3):
        b.append(value=i, key=None, timestamp=0, headers=None, offset=i)
    chunks = list(b.iter_chunks(2))
    assert all(isinstance(c, tuple) for c in chunks) and [len(c) for c in chunks] == [2, 1]


class Recorder(BatchingSink):
    def __init__(self):
        super().__init__()
        self.written = []

    def write(self, batch):
        self.written.append((batch.topic, batch.partition, [i.value for i in batch]))


def test_batching_sink_groups_by_partition_and_clears():
    s = Recorder()
    s.add(1, None, 0, None, "t", 0, 0)
    s.add(2, None, 0, None, "t", 1, 0)
    s.add(3, None, 0, None, "t", 0, 1)
    s.flush()
    assert sorted(s.written) == [("t", 0, [1, 3]), ("t", 1, [2])]
    s.flush()
    assert len(s.written) == 2
    s.add(4, None, 0, None, "t", 0, 2)
    s.on_paused()
    s.flush()
    assert len(s.written) == 2
    # pending records are not pickled (each Spark task starts empty)
    s.add(5, None, 0, None, "t", 0, 3)
    assert pickle.loads(pickle.dumps(s))._batches == {}


def test_backpressure_error_carries_retry_after():
    """As Quix Streams: ``retry_after`` kept as given, the exception's args and text are it, and
    it survives pickling (exceptions cross Spark's process boundaries pickled)."""
    err = SinkBackpressureError(2)
    assert (err.retry_after, err.args, str(err)) == (2, (2,), "2")
    again = pickle.loads(pickle.dumps(SinkBackpressureError(retry_after=0.5)))
    assert type(again) is SinkBackpressureError and again.retry_after == 0.5


def test_batching_sink_repr():
    assert repr(Recorder()) == "<BatchingSink: Recorder>"


def test_connect_callbacks():
    calls = []

    class Failing(Recorder):
        def setup(self):
            raise ConnectionError("down")

    Failing.__init__  # noqa: B018
    s = Failing()
    s._on_client_connect_failure = lambda exc: calls.append(type(exc).__name__)
    s.start()
    ok = Recorder()
    ok._on_client_connect_success = lambda: calls.append("ok")
    ok.start()
    assert calls == ["ConnectionError", "ok"]
    with pytest.raises(ConnectionError):
        Failing().start()


def test_a_raising_success_callback_goes_to_the_failure_callback():
    """As Quix Streams: ``start()`` hands an exception of the success callback to the failure
    callback (by default re-raised)."""
    seen = []

    def bad_success():
        raise RuntimeError("logging failed")

    class Quiet(BatchingSink):
        def write(self, batch):
            pass

    Quiet(on_client_connect_success=bad_success, on_client_connect_failure=seen.append).start()
    assert [str(e) for e in seen] == ["logging failed"]
    with pytest.raises(RuntimeError, match="logging failed"):
        Quiet(on_client_connect_success=bad_success).start()


def test_list_sink_metadata_and_paused():
    s = ListSink(metadata=True)
    s.add(5, b"k", 1, None, "t", 0, 9)
    s.flush()
    assert list(s) == [
        {"_key": b"k", "_timestamp": 1, "_headers": None, "_topic": "t", "_partition": 0, "_offset": 9, "value": 5}
    ]
    s.add(6, b"k", 1, None, "t", 0, 10)
    s.on_paused()
    s.flush()
    assert len(s) == 1


def test_list_sink_metadata_comes_first_and_the_values_keys_win():
    s = ListSink(metadata=True)
    s.add({"a": 1, "_key": "mine"}, b"k", 1, None, "t", 0, 9)
    assert list(s[0]) == ["_key", "_timestamp", "_headers", "_topic", "_partition", "_offset", "a"]
    assert s[0]["_key"] == "mine"


def test_list_sink_slices_and_copies_keep_their_items():
    s = ListSink()
    for v in (1, 2, 3):
        s.add(v, None, 0, None, "t", 0, v)
    assert s[0:2] == [1, 2] and isinstance(s[0:2], ListSink)
    assert s + [4] == [1, 2, 3, 4] and s.copy() == [1, 2, 3]
    assert ListSink([7, 8]) == [7, 8]


def test_csv_sink_header_once(tmp_path):
    path = tmp_path / "x.csv"
    s = CSVSink(str(path), key_serializer=lambda k: k.decode())
    s.add({"a": 1}, b"k", 5, None, "t", 0, 1)
    s.flush()
    s.add({"a": 2}, b"k", 6, None, "t", 0, 2)
    s.flush()
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    assert rows == [
        ["key", "value", "timestamp", "topic", "partition", "offset"],
        ["k", '{"a": 1}', "5", "t", "0", "1"],
        ["k", '{"a": 2}', "6", "t", "0", "2"],
    ]


def test_csv_sink_writes_no_header_into_a_file_that_already_exists(tmp_path):
    """As the reference: only a file the sink creates gets the header row, even if the existing
    file is empty."""
    path = tmp_path / "given.csv"
    path.touch()
    s = CSVSink(str(path))
    s.add({"a": 1}, "k", 5, None, "t", 0, 1)
    s.flush()
    assert path.read_bytes() == b'k,"{""a"": 1}",5,t,0,1\r\n'


def test_list_sink_is_a_list_at_once_and_drops_a_retried_batch():
    s = ListSink()
    s.add({"a": 1}, b"k", 1, None, "t", 0, 1)
    assert s == [{"a": 1}] and s[0] == {"a": 1}  # visible before any flush
    s.append({"b": 2})
    assert len(s) == 2
    s.flush()
    s.add({"c": 3}, b"k", 2, None, "t", 0, 2)
    s.add({"d": 4}, b"k", 3, None, "t", 0, 3)
    s.on_paused()  # the batch is retried: only what it added since the last flush goes
    assert list(s) == [{"a": 1}, {"b": 2}]
