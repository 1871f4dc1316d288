"""``InfluxDB3Source``: the points of InfluxDB 3 measurements, window by window, produced to a topic.

>>> source = InfluxDB3Source(host="https://eu-central-1-1.aws.cloud2.influxdata.com", token="...",
...                          organization_id="my-org", database="sensors", measurements="temperature",
...                          time_delta="1h")
>>> source.name
'influxdb3_sensors_temperature'

Needs ``pip install "streamspark[influxdb3]"`` (``influxdb3-python``).
"""

from __future__ import annotations

import json
import logging
from datetime import datetime, timedelta, timezone
from typing import Any, Callable, Optional, TypeVar, Union

from ....models.topics import Topic
from ...base.exceptions import SourceInputError
from ...base.source import ClientConnectFailureCallback, ClientConnectSuccessCallback, Source, string_keyed_json_topic
from .._client import import_client

__all__ = ("InfluxDB3Source", "NoMeasurementsFound")

logger = logging.getLogger(__name__)

T = TypeVar("T")

_TIME_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
_DEFAULT_QUERY = "SELECT * FROM {measurement_name} WHERE time >= $start_time AND time < $end_time"  # noqa: S608


class NoMeasurementsFound(SourceInputError):
    """The database has no measurements (and none were named)."""


def _interval_seconds(interval: str) -> int:
    """``"5m"`` -> 300: a count and a unit (``s``, ``m``, ``h`` or ``d``).

    >>> _interval_seconds("90s"), _interval_seconds("2h")
    (90, 7200)
    """
    unit = interval[-1:]
    if unit not in _TIME_UNITS or not interval[:-1].isdigit() or int(interval[:-1]) <= 0:
        raise ValueError(f'time_delta must be a positive count and a unit of s, m, h or d (e.g. "5m"), got {interval!r}')
    return int(interval[:-1]) * _TIME_UNITS[unit]


class InfluxDB3Source(Source):
    """Extract the points of a set of measurements (or of every measurement) of a database.

    Measurements are processed one after another: each is queried in tumbling ``time_delta``
    windows from ``start_date`` until ``end_date``, and every point of a window is produced as
    a JSON object (its columns, times as ISO strings, plus ``measurement_column_name``), keyed
    by default by the measurement's name. Then the next measurement starts.

    Without ``end_date`` the first measurement is followed for ever (a window is queried once
    it has passed), so no other measurement is ever processed.

    Guarantee: at-least-once within a run; a restarted source begins again at ``start_date``.
    A failing query or flush is retried ``max_retries`` times, waiting 1 s, 2 s, 4 s, ... in
    between; then the source stops with :class:`~streamspark.sources.SourceInputError` naming
    it and the measurement's window (or the database, when it cannot be reached at all).

    :param host: the InfluxDB host URL.
    :param token: an API token.
    :param organization_id: the organization (InfluxDB Cloud).
    :param database: the database (bucket).
    :param key_setter: ``f(record) -> key`` (default: the measurement's name).
    :param timestamp_setter: ``f(record) -> int`` milliseconds (default: none: the time of
        producing).
    :param start_date: where the first window starts (default: when this module was imported).
    :param end_date: where the last window ends (default: never).
    :param measurements: one name or a list (default: every measurement of the database).
    :param measurement_column_name: the field of each record holding its measurement's name.
    :param sql_query: an InfluxQL query replacing the default one; ``{measurement_name}``,
        ``{start_time}`` and ``{end_time}`` are filled in for each window.
    :param time_delta: the window size: a count and a unit, ``s``, ``m``, ``h`` or ``d``.
    :param delay: seconds to wait between windows.
    :param max_retries: how many times a failed query or flush is tried again.
    :param name: the source's name (default ``influxdb3_<database>_<measurements joined by
        "-", or "measurements">``).
    :param shutdown_timeout: seconds the application waits for the source to stop.
    :param on_client_connect_success: called after ``setup()`` succeeded.
    :param on_client_connect_failure: called with the exception when ``setup()`` failed.
    """

    _process_local_attributes = ("_client",)

    def __init__(
        self,
        host: str,
        token: str,
        organization_id: str,
        database: str,
        key_setter: Optional[Callable[[object], object]] = None,
        timestamp_setter: Optional[Callable[[object], int]] = None,
        start_date: datetime = datetime.now(tz=timezone.utc),
        end_date: Optional[datetime] = None,
        measurements: Optional[Union[str, list[str]]] = None,
        measurement_column_name: str = "_measurement_name",
        sql_query: Optional[str] = None,
        time_delta: str = "5m",
        delay: float = 0,
        max_retries: int = 5,
        name: Optional[str] = None,
        shutdown_timeout: float = 10,
        on_client_connect_success: Optional[ClientConnectSuccessCallback] = None,
        on_client_connect_failure: Optional[ClientConnectFailureCallback] = None,
    ) -> None:
        names = [measurements] if isinstance(measurements, str) else list(measurements or [])
        super().__init__(
            name=name or f"influxdb3_{database}_{'-'.join(names) or 'measurements'}",
            shutdown_timeout=shutdown_timeout,
            on_client_connect_success=on_client_connect_success,
            on_client_connect_failure=on_client_connect_failure,
        )
        if max_retries < 0:
            raise ValueError(f"max_retries must be >= 0, got {max_retries}")
        self._client_kwargs = {"host": host, "token": token, "org": organization_id, "database": database}
        self._host = host
        self._database = database
        self._key_setter = key_setter or self._measurement_key
        self._timestamp_setter = timestamp_setter
        self._start_date = start_date
        self._end_date = end_date
        self._measurements = names
        self._measurement_column_name = measurement_column_name
        self._query = (sql_query or "").replace("{start_time}", "$start_time").replace("{end_time}", "$end_time")
        self._query = self._query or _DEFAULT_QUERY
        self._time_delta = timedelta(seconds=_interval_seconds(time_delta))
        self._delay = delay
        self._max_retries = max_retries
        self._client: Any = None

    def default_topic(self) -> Topic:
        """``<name>``: string keys, JSON values."""
        return string_keyed_json_topic(self.name)

    def influxdb_client(self) -> Any:
        """The ``influxdb_client_3.InfluxDBClient3`` to query with (override it to configure the
        client differently)."""
        client_module = import_client("influxdb_client_3", "InfluxDB3Source", "influxdb3")
        return client_module.InfluxDBClient3(**self._client_kwargs)

    def _measurement_key(self, record: Any) -> Any:
        return record[self._measurement_column_name]

    def _show_measurements(self) -> list[str]:
        result = self._client.query(query="SHOW MEASUREMENTS", mode="pandas", language="influxql")
        return [] if result is None or result.empty else [str(n) for n in result["name"].tolist()]

    def setup(self) -> None:
        """Create the client and check the database answers (listing its measurements)."""
        if self._client is not None:
            return
        self._client = self.influxdb_client()
        try:
            found = self._show_measurements()
        except Exception as exc:
            self._close_client()
            raise SourceInputError(
                self.name, f'the InfluxDB 3 database "{self._database}" at {self._host}', str(exc) or type(exc).__name__
            ) from exc
        if not self._measurements:
            if not found:
                self._close_client()
                raise NoMeasurementsFound(self.name, f'the InfluxDB 3 database "{self._database}"', "it has no measurements")
            self._measurements = found

    def _close_client(self) -> None:
        if self._client is not None:
            try:
                self._client.close()
            finally:
                self._client = None

    # --- running -----------------------------------------------------------------------------
    def _retrying(self, what: str, action: Callable[[], T]) -> T:
        backoff = 1.0
        for attempt in range(self._max_retries + 1):
            try:
                return action()
            except Exception as exc:
                if attempt == self._max_retries:
                    raise SourceInputError(self.name, what, str(exc) or type(exc).__name__) from exc
                logger.warning(
                    'Source "%s": %s failed (%s); trying again in %ss (%d/%d)',
                    self.name,
                    what,
                    exc,
                    backoff,
                    attempt + 1,
                    self._max_retries,
                )
                self._sleep(backoff)
                backoff *= 2
        raise AssertionError("unreachable")

    def _query_window(self, measurement: str, start: datetime, end: datetime) -> list[dict[str, Any]]:
        logger.info('Source "%s" querying %s from %s to %s', self.name, measurement, start, end)
        data = self._client.query(
            query=self._query.format(measurement_name=measurement),
            mode="pandas",
            language="influxql",
            query_parameters={"start_time": start.isoformat(), "end_time": end.isoformat()},
        )
        if data is None or data.empty:
            return []
        data = data.drop(columns=["iox::measurement"], errors="ignore")
        data[self._measurement_column_name] = measurement
        records: list[dict[str, Any]] = json.loads(data.to_json(orient="records", date_format="iso"))
        return records

    def _produce_records(self, records: list[dict[str, Any]], what: str) -> None:
        for number, record in enumerate(records, 1):
            try:
                key = self._key_setter(record)
                timestamp = self._timestamp_setter(record) if self._timestamp_setter else None
            except Exception as exc:
                raise SourceInputError(self.name, f"record {number} of {what}", f"a setter failed: {exc!r}") from exc
            msg = self.serialize(key=key, value=record, timestamp_ms=timestamp)
            self.produce(key=msg.key, value=msg.value, timestamp=msg.timestamp)
        self._retrying(f"delivering {what}", self.flush)

    def _process_measurement(self, measurement: str) -> None:
        logger.info('Source "%s" processing measurement %s', self.name, measurement)
        start = self._start_date
        while self.running and (self._end_date is None or start < self._end_date):
            end = start + self._time_delta
            if self._end_date is None:  # following the present: wait for the window to pass
                self._sleep((end - datetime.now(timezone.utc)).total_seconds())
                if not self.running:
                    return
            what = f'measurement "{measurement}" from {start.isoformat()} to {end.isoformat()}'
            records = self._retrying(f"the {what}", lambda: self._query_window(measurement, start, end))
            if records:
                self._produce_records(records, f"the {what}")
            start = end
            if self._delay > 0:
                self._sleep(self._delay)
        logger.info('Source "%s" finished measurement %s', self.name, measurement)

    def run(self) -> None:
        if len(self._measurements) > 1 and self._end_date is None:
            logger.warning(
                'Source "%s" has no end_date: only measurement "%s" of %s will be processed',
                self.name,
                self._measurements[0],
                self._measurements,
            )
        try:
            for measurement in self._measurements:
                if not self.running:
                    return
                self._process_measurement(measurement)
            logger.info('Source "%s" processed every measurement', self.name)
        finally:
            self._close_client()
