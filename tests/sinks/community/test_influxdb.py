"""InfluxDB1Sink against a real InfluxDB 1.x; InfluxDB3Sink and HTTP 429 backpressure against a
recording HTTP server (no InfluxDB 3 installs here: tested at its HTTP boundary, labelled)."""

from __future__ import annotations

import gzip
import http.server
import shutil
import ssl
import subprocess
import threading
import urllib.parse
from datetime import datetime, timezone

import pytest

from streamspark.sinks import SinkBackpressureError
from streamspark.sinks._influx.http import InfluxDBWriteError
from streamspark.sinks._influx.points import PointConverter
from streamspark.sinks.community.influxdb1 import InfluxDB1Sink
from streamspark.sinks.core.influxdb3 import InfluxDB3Sink

from .conftest import feed, make_batch


def test_line_protocol_rules():
    conv = PointConverter("m", fields_keys=("f",), tags_keys=("t",), include_metadata_tags=True)
    assert (
        conv.line({"t": "x,y", "f": 'a"b', "other": 1}, b"k", 1_700_000_000_000, "top", 3)
        == 'm,__key=k,__partition=3,__topic=top,t=x\\,y f="a\\"b" 1700000000000'
    )
    whole = PointConverter("m", tags_keys=("t",), convert_ints_to_floats=True)
    assert (
        whole.line({"t": 1, "i": 2, "b": True, "none": None}, None, 1_700_000_000_000, "t", 0)
        == "m,t=1 i=2.0,b=true 1700000000000"
    )
    with pytest.raises(KeyError, match="field 'f' is missing"):
        conv.line({"t": "x"}, None, 1_700_000_000_000, "t", 0)
    assert (
        PointConverter("m", fields_keys=("f", "g"), allow_missing_fields=True).line({"g": 1}, None, 1_700_000_000_005, "t", 0)
        == "m g=1i 1700000000005"
    )
    assert (
        PointConverter("m", fields_keys=("f",)).line({"f": None}, None, 1_700_000_000_005, "t", 0) is None
    )  # no field: no point
    with pytest.raises(TypeError, match="dict values only"):
        conv.line([1], None, 0, "t", 0)
    with pytest.raises(ValueError, match="overlap"):
        PointConverter("m", fields_keys=("a",), tags_keys=("a",))


def test_time_setter_and_precision():
    by_key = PointConverter(lambda v: v["name"], time_setter="ts", time_precision="s", fields_keys=("x",))
    assert by_key.line({"name": "cpu", "ts": 1_700_000_000, "x": 1}, None, 0, "t", 0) == "cpu x=1i 1700000000"
    with pytest.raises(ValueError, match='`time_precision` of "s" expects a 10-digit integer epoch, got 13'):
        by_key.line({"name": "cpu", "ts": 1_700_000_000_000, "x": 1}, None, 0, "t", 0)
    assert by_key.line({"name": "c", "ts": "2023-11-14T22:13:20Z", "x": 1}, None, 0, "t", 0).endswith(" 1700000000")
    ns = PointConverter("m", fields_keys=("x",), time_setter=lambda v: v.get("when"), time_precision="ns")
    when = datetime(2023, 11, 14, 22, 13, 20, 123456, tzinfo=timezone.utc)
    assert ns.line({"when": when, "x": 1}, None, 0, "t", 0).endswith(" 1700000000123456000")
    # as the reference: the default time is the Kafka timestamp in milliseconds, which another
    # precision does not match
    with pytest.raises(ValueError, match="expects a 19-digit integer epoch, got 13.*Kafka timestamp"):
        ns.line({"x": 1}, None, 1_700_000_000_001, "t", 0)
    assert PointConverter("m", time_precision="ms").line({"x": 1}, None, 1_700_000_000_001, "t", 0) == "m x=1i 1700000000001"


def test_unsupported_field_types_are_value_errors():
    """As Quix Streams (its InfluxDB client): a list, dict or other type as a field is a ValueError."""
    conv = PointConverter("m")
    for bad in ([1], {"a": 1}, b"x", datetime(2024, 1, 1)):
        with pytest.raises(ValueError, match=f'Type: "{type(bad)}" of field: "f" is not supported'):
            conv.line({"f": bad}, None, 1_700_000_000_000, "t", 0)


def test_influxdb1_points_land_in_a_real_server(influxdb):
    influxdb.query("CREATE DATABASE metrics")
    sink = InfluxDB1Sink(
        host=influxdb.url,
        database="metrics",
        measurement="cpu",
        tags_keys=["host"],
        fields_keys=["load", "ok"],
        batch_size=2,
        include_metadata_tags=True,
    )
    sink.start()
    feed(
        sink,
        make_batch(
            {"host": "a", "load": 0.5, "ok": True, "ignored": 1},
            {"host": "b", "load": 1.5, "ok": False},
            {"host": "a", "load": 2.5, "ok": True},
        ),
    )
    sink.flush()
    feed(sink, make_batch({"host": "a", "load": 9.5, "ok": True}))  # same tags + time: overwrites (idempotent)
    sink.flush()
    series = influxdb.query("SELECT * FROM cpu ORDER BY time", db="metrics")["results"][0]["series"][0]
    rows = [dict(zip(series["columns"], v)) for v in series["values"]]
    assert [(r["host"], r["load"], r["ok"], r["__key"]) for r in rows] == [
        ("a", 9.5, True, "k0"),
        ("b", 1.5, False, "k1"),
        ("a", 2.5, True, "k2"),
    ]
    assert rows[0]["time"] == "2023-11-14T22:13:20Z" and "ignored" not in rows[0]


def test_influxdb1_refusal_and_down_server(influxdb, closed_port):
    sink = InfluxDB1Sink(host=influxdb.url, database="no_such_db", measurement="m")
    sink.start()
    feed(sink, make_batch({"x": 1}))
    with pytest.raises(Exception, match="HTTP 404.*database not found"):
        sink.flush()
    with pytest.raises(ConnectionError, match="unreachable"):
        InfluxDB1Sink(host="127.0.0.1", port=closed_port, database="d", measurement="m").start()


class _Recorder(http.server.BaseHTTPRequestHandler):
    """An HTTP endpoint speaking the InfluxDB write API: records requests; answers 429 first when told."""

    requests: list = []
    throttle = 0
    refusal: tuple = ()  # (status, body) to answer every write with, when set

    def do_GET(self):
        self.send_response(204)
        self.end_headers()

    def do_POST(self):
        body = self.rfile.read(int(self.headers["Content-Length"]))
        if self.headers.get("Content-Encoding") == "gzip":
            body = gzip.decompress(body)
        cls = type(self)
        if cls.throttle:
            cls.throttle -= 1
            self.send_response(429)
            self.send_header("Retry-After", "2")
            self.end_headers()
            return
        if cls.refusal:
            status, answer = cls.refusal
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(answer.encode())
            return
        cls.requests.append((self.path, dict(self.headers), body.decode()))
        self.send_response(204)
        self.end_headers()

    def log_message(self, *args):
        pass


@pytest.fixture
def recorder():
    _Recorder.requests, _Recorder.throttle, _Recorder.refusal = [], 0, ()
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Recorder)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server
    server.shutdown()


def test_influxdb3_write_request_at_the_http_boundary(recorder):
    """Client-boundary test: no InfluxDB 3 server can be installed here."""
    port = recorder.server_address[1]
    sink = InfluxDB3Sink(
        token="secret",
        host=f"http://127.0.0.1:{port}",
        organization_id="org",
        database="db",
        measurement="m",
        tags_keys=["t"],
        time_setter=lambda value: value.pop("us"),
        time_precision="us",
        batch_size=2,
    )
    sink.start()
    feed(
        sink,
        make_batch(
            {"t": "a", "v": 1, "us": 1700000000000000},
            {"t": "b", "v": 2, "us": 1700000000001000},
            {"t": "c", "v": 3, "us": 1700000000002000},
        ),
    )
    sink.flush()
    assert len(_Recorder.requests) == 2  # batch_size splits the requests
    path, headers, body = _Recorder.requests[0]
    assert urllib.parse.parse_qs(urllib.parse.urlsplit(path).query) == {"bucket": ["db"], "org": ["org"], "precision": ["us"]}
    assert headers["Authorization"] == "Token secret" and headers["Content-Encoding"] == "gzip"
    assert body.splitlines() == ["m,t=a v=1i 1700000000000000", "m,t=b v=2i 1700000000001000"]


def test_influxdb3_metadata_tags_leave_out_a_missing_key(recorder):
    """As the reference: a record without a key gets no ``__key`` tag (not ``__key=None``)."""
    port = recorder.server_address[1]
    sink = InfluxDB3Sink(
        token="t",
        host=f"http://127.0.0.1:{port}",
        organization_id="o",
        database="db",
        measurement="m",
        include_metadata_tags=True,
    )
    feed(sink, make_batch({"v": 1}, {"v": 2}, keys=[None, b"k1"], topic="events", partition=2))
    sink.flush()
    assert _Recorder.requests[0][2].splitlines() == [
        "m,__partition=2,__topic=events v=1i 1700000000000",
        "m,__key=b'k1',__partition=2,__topic=events v=2i 1700000000001",
    ]


def test_http_429_is_backpressure_with_retry_after(recorder):
    """Client-boundary test: the recording server answers 429 + Retry-After like a throttled InfluxDB."""
    _Recorder.throttle = 1
    sink = InfluxDB1Sink(host="127.0.0.1", port=recorder.server_address[1], database="d", measurement="m")
    sink.start()
    feed(sink, make_batch({"v": 1}))
    with pytest.raises(SinkBackpressureError) as info:
        sink.flush()
    assert info.value.retry_after == 2.0
    feed(sink, make_batch({"v": 1}))  # the engine feeds the same records again after the delay
    sink.flush()
    assert [r[2] for r in _Recorder.requests] == ["m v=1i 1700000000000"]


RETENTION_REFUSAL = (422, '{"code":"invalid","message":"partial write: points beyond retention policy dropped=1"}')


def influxdb3_sink(port, **kwargs):
    return InfluxDB3Sink(token="t", host=f"http://127.0.0.1:{port}", organization_id="o", database="d", measurement="m", **kwargs)


def test_influxdb3_retention_refusals_are_skipped_by_default(recorder, caplog):
    """Client-boundary test: the recording server refuses like InfluxDB does points older than
    the retention period (HTTP 422)."""
    _Recorder.refusal = RETENTION_REFUSAL
    sink = influxdb3_sink(recorder.server_address[1])
    sink.start()
    feed(sink, make_batch({"v": 1}, {"v": 2}))
    with caplog.at_level("WARNING"):
        sink.flush()  # nothing raised: the points are skipped
    assert "retention policy" in caplog.text and "t[0] (offsets 0-1)" in caplog.text


def test_influxdb3_retention_refusals_can_fail_the_batch(recorder):
    _Recorder.refusal = RETENTION_REFUSAL
    sink = influxdb3_sink(recorder.server_address[1], raise_on_retention_violation=True)
    sink.start()
    feed(sink, make_batch({"v": 1}))
    with pytest.raises(InfluxDBWriteError, match="HTTP 422.*retention policy") as info:
        sink.flush()
    assert info.value.status == 422


def test_influxdb3_other_refusals_always_fail_the_batch(recorder):
    _Recorder.refusal = (422, '{"message":"unable to parse line"}')
    sink = influxdb3_sink(recorder.server_address[1])
    sink.start()
    feed(sink, make_batch({"v": 1}))
    with pytest.raises(InfluxDBWriteError, match="unable to parse"):
        sink.flush()


@pytest.fixture
def https_recorder(tmp_path):
    """The recording server behind TLS with a self-signed certificate."""
    if shutil.which("openssl") is None:
        pytest.skip("openssl is needed to make a self-signed certificate")
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=localhost"]
        + ["-keyout", str(key), "-out", str(cert)],
        check=True,
        capture_output=True,
    )
    _Recorder.requests, _Recorder.throttle, _Recorder.refusal = [], 0, ()
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Recorder)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server
    server.shutdown()


def test_influxdb3_verify_ssl(https_recorder):
    """Client-boundary test over HTTPS: a self-signed certificate is refused unless verify_ssl=False."""
    host = f"https://127.0.0.1:{https_recorder.server_address[1]}"
    checking = InfluxDB3Sink(token="t", host=host, organization_id="o", database="d", measurement="m")
    with pytest.raises(ConnectionError, match="CERTIFICATE_VERIFY_FAILED"):
        checking.start()
    trusting = InfluxDB3Sink(token="t", host=host, organization_id="o", database="d", measurement="m", verify_ssl=False)
    trusting.start()
    feed(trusting, make_batch({"v": 1}))
    trusting.flush()
    assert [r[2] for r in _Recorder.requests] == ["m v=1i 1700000000000"]
