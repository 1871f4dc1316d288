"""Runs each source in a process of its own and supervises it.

The application registers its sources with a :class:`SourceManager`, starts them when its run
starts, checks them while it runs and stops them when it stops::

    manager = SourceManager()
    manager.register(source, topic, {"bootstrap.servers": "127.0.0.1:9092"}, consumer_group="app")
    manager.start()
    while manager.is_alive():
        manager.raise_for_error()      # SourceException: the source's name and traceback
        time.sleep(1)
    manager.stop()                     # SIGTERM, shutdown_timeout, then SIGKILL
    manager.raise_for_error()

Processes use the ``spawn`` start method, so a source inherits nothing of the Spark driver.
The source object is pickled with cloudpickle: sources and callbacks defined in ``__main__``,
lambdas included, reach their process. The program must still guard its entry point with
``if __name__ == "__main__":``, as spawned processes import the main module.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import pickle
import signal
import threading
import time
import traceback
from multiprocessing.connection import Connection
from typing import Any, Callable, Literal, Mapping, Optional, Union

from ...kafka.configuration import ConnectionConfig
from ...logging import LogLevel, configure_logging
from ...models.topics import Topic, TopicAdmin, TopicConfig, TopicConfigurationError
from .exceptions import CheckpointProducerTimeout, SourceException
from .multiprocessing import multiprocessing
from .producer import SourceProducer
from .source import BaseSource, StatefulSource
from .store import SourceStorePartition, changelog_topic_name, transactional_id

__all__ = ("SourceManager", "SourceProcess", "SourceSettings", "default_source_topic")

logger = logging.getLogger(__name__)

ProcessingGuarantee = Literal["at-least-once", "exactly-once"]

#: prefix of the name of a source's default topic
DEFAULT_TOPIC_PREFIX = "source__"


def default_source_topic(source: BaseSource) -> Topic:
    """The source's ``default_topic()`` renamed ``source__<name>`` (what the application uses
    when no topic is given).

    >>> from streamspark.sources.core.csv import CSVSource
    >>> default_source_topic(CSVSource("data.csv", name="readings")).name
    'source__readings'
    """
    topic = source.default_topic()
    return topic.__clone__(name=f"{DEFAULT_TOPIC_PREFIX}{topic.name}")


def source_name(source: BaseSource) -> str:
    """How messages name a source: its ``name``, else its class."""
    name = getattr(source, "name", None)
    return name if isinstance(name, str) and name else type(source).__name__


def connection_settings(config: Mapping[str, Any]) -> dict[str, Any]:
    """The connection part (address, SASL, SSL) of librdkafka settings.

    >>> connection_settings({"bootstrap.servers": "h:9092", "linger.ms": 5})
    {'bootstrap.servers': 'h:9092'}
    """
    return ConnectionConfig.from_librdkafka_dict(dict(config), ignore_extras=True).as_librdkafka_dict()


@dataclasses.dataclass(frozen=True)
class SourceSettings:
    """What a source's process needs besides the source and its topic (picklable).

    :param producer_config: librdkafka settings of the source's producer.
    :param consumer_config: librdkafka settings of the consumer reading a stateful source's
        changelog back (its group id and isolation level are set by the source's process).
    :param consumer_group: the application's consumer group (names the changelog topic and
        the transactional id of stateful sources).
    :param exactly_once: stateful sources produce in Kafka transactions.
    :param request_timeout: timeout of broker calls, flushes and transaction commits.
    :param loglevel: level of the ``streamspark`` logger in the source's process.
    """

    producer_config: dict[str, Any]
    consumer_config: dict[str, Any]
    consumer_group: str
    exactly_once: bool = False
    request_timeout: float = 30.0
    loglevel: Union[int, LogLevel] = logging.INFO


class SourceProcess:
    """A source and the process that runs it (used from the application's process).

    :param source: the source.
    :param topic: the topic it produces to (created before the process starts).
    :param settings: the producer and state settings.
    """

    def __init__(self, source: BaseSource, topic: Topic, settings: SourceSettings) -> None:
        self.source = source
        self.topic = topic
        self.settings = settings
        self.name = source_name(source)
        self._process: Any = None
        self._reader: Optional[Connection] = None
        #: in the source's process: where failures are reported, and the application's pid
        self._writer: Optional[Connection] = None
        self._parent_pid = 0
        self._failure: Optional[dict[str, Any]] = None
        self._eof = False
        self._killed = False
        #: whether the process got as far as running our code (past importing the main module)
        self._entered = False

    def __repr__(self) -> str:
        return f"<SourceProcess {self.name!r} pid={self.pid} exitcode={self.exitcode}>"

    @property
    def shutdown_timeout(self) -> float:
        return float(getattr(self.source, "shutdown_timeout", BaseSource.shutdown_timeout))

    @property
    def started(self) -> bool:
        return self._process is not None

    @property
    def pid(self) -> Optional[int]:
        return None if self._process is None else self._process.pid

    @property
    def exitcode(self) -> Optional[int]:
        """The process's exit code (None while it runs; negative: ended by that signal)."""
        return None if self._process is None else self._process.exitcode

    def start(self) -> None:
        """Start the source's process (it runs :meth:`run`).

        :raises SourceException: the source (or something it holds) cannot be pickled.
        """
        if self._process is not None:
            raise RuntimeError(f'Source "{self.name}" was already started')
        from pyspark import cloudpickle  # pickles __main__ classes and lambdas by value

        self._parent_pid = os.getpid()
        try:
            payload = cloudpickle.dumps(self)
        except Exception as exc:
            raise SourceException(
                f"it cannot be sent to its process (pickling failed: {exc!r}); create clients and "
                "open files in setup()/run(), not in __init__",
                source_name=self.name,
            ) from exc
        reader, writer = multiprocessing.Pipe(duplex=False)
        process = multiprocessing.Process(
            target=_process_main, args=(payload, self.settings.loglevel, writer), name=f"source-{self.name}"
        )
        logger.info('Starting source "%s"', self.name)
        process.start()
        writer.close()  # the child holds the only writer: a dead child reads as EOF
        self._process, self._reader = process, reader

    def __getstate__(self) -> dict[str, Any]:
        # what the source's process gets: not the parent's handles on it
        state = self.__dict__.copy()
        state.update(_process=None, _reader=None, _writer=None)
        return state

    def is_alive(self) -> bool:
        return self._process is not None and self._process.is_alive()

    @property
    def finished(self) -> bool:
        """True once the process ended without error (its source finished, or stopped on request)."""
        if self._process is None or self._process.is_alive() or self._killed:
            return False
        self._drain()
        return self._failure is None and self._process.exitcode in (0, -signal.SIGTERM)

    def _drain(self) -> None:
        """Read what the child reported (read while it runs: a large report must not block it)."""
        reader = self._reader
        if reader is None or self._eof:
            return
        try:
            while reader.poll():
                message = reader.recv()
                if message == _ENTERED:
                    self._entered = True
                elif isinstance(message, dict) and self._failure is None:
                    self._failure = message
        except (EOFError, OSError):
            self._eof = True

    def raise_for_error(self) -> None:
        """Raise :class:`SourceException` if the source failed (raised, was killed, or exited
        with an error code); nothing while it runs or after it finished cleanly."""
        if self._process is None:
            return
        self._drain()
        report = self._failure
        if report is not None:
            self._process.join(5)  # the child exits right after reporting
            cause = None
            if report.get("pickled") is not None:
                try:
                    cause = pickle.loads(report["pickled"])
                except Exception:
                    cause = None
            error = SourceException(
                report["error"],
                source_name=self.name,
                pid=self.pid,
                exitcode=self.exitcode,
                child_traceback=report.get("traceback"),
            )
            if isinstance(cause, BaseException):
                raise error from cause
            raise error
        if self._process.is_alive():
            return
        code = self._process.exitcode
        if self._killed:
            raise SourceException(
                f"it did not stop within its shutdown_timeout ({self.shutdown_timeout}s) and was killed",
                source_name=self.name,
                pid=self.pid,
                exitcode=code,
            )
        if code is not None and code > 0 and not self._entered:
            raise SourceException(
                f"its process failed (exit code {code}) before the source could run, while importing the "
                "program's main module (its error is in the program's error output): source processes are "
                "spawned, and a spawned process imports the main module again; run the application under "
                '`if __name__ == "__main__":`',
                source_name=self.name,
                pid=self.pid,
                exitcode=code,
            )
        if code not in (0, -signal.SIGTERM):
            how = f"was killed by {signal.Signals(-code).name}" if code is not None and code < 0 else "ended"
            raise SourceException(
                f"its process {how} without reporting an error", source_name=self.name, pid=self.pid, exitcode=code
            )

    def terminate(self) -> None:
        """Ask the source to stop (SIGTERM: its ``stop()`` runs in its process)."""
        if self.is_alive():
            logger.info('Stopping source "%s"', self.name)
            self._process.terminate()

    def join(self, timeout: Optional[float] = None) -> None:
        if self._process is not None:
            self._process.join(timeout)
            self._drain()

    def kill(self) -> None:
        """End the process with SIGKILL (after its shutdown timeout)."""
        if self.is_alive():
            logger.error('Source "%s" did not stop within %ss: killing it', self.name, self.shutdown_timeout)
            self._killed = True
            self._process.kill()
            self._process.join(5)

    def stop(self) -> None:
        """SIGTERM, wait up to the source's ``shutdown_timeout``, then SIGKILL."""
        self.terminate()
        self.join(self.shutdown_timeout)
        self.kill()

    # --- in the source's process -----------------------------------------------------------
    def run(self) -> None:
        """The entry point of the source's process: set up, run the source, report a failure.

        SIGTERM and SIGINT call the source's ``stop()``. If the application's process
        disappears (killed), the source is stopped too, and its process ends at most
        ``shutdown_timeout`` seconds later.
        """
        source, name = self.source, self.name
        stop_requested = threading.Event()

        def request_stop() -> None:
            if not stop_requested.is_set():
                stop_requested.set()
                source.stop()

        def on_signal(signum: int, frame: Any) -> None:
            logger.debug('Source "%s" received %s', name, signal.Signals(signum).name)
            request_stop()

        signal.signal(signal.SIGTERM, on_signal)
        signal.signal(signal.SIGINT, on_signal)
        threading.Thread(target=self._watch_parent, args=(request_stop,), name="parent-watch", daemon=True).start()
        try:
            self._configure()
            if not stop_requested.is_set():
                logger.info('Source "%s" started', name)
                source.start()
            remaining = source.producer.flush()  # a BaseSource may leave messages queued
            if remaining:
                raise CheckpointProducerTimeout(f"{remaining} message(s) were not delivered before the flush timeout")
            logger.info('Source "%s" completed', name)
        except SystemExit as exc:
            if exc.code not in (None, 0):
                self._send_failure(exc)
                raise
        except BaseException as exc:
            logger.error('Source "%s" failed: %r', name, exc)
            self._send_failure(exc)
            raise SystemExit(1)

    def _configure(self) -> None:
        source, settings = self.source, self.settings
        extra: dict[str, Any] = {}
        txid = None
        if isinstance(source, StatefulSource) and settings.exactly_once:
            txid = transactional_id(settings.consumer_group, source.store_name)
        producer = SourceProducer(settings.producer_config, transactional_id=txid, flush_timeout=settings.request_timeout)
        if isinstance(source, StatefulSource):
            if txid is not None:
                producer.client  # initialises transactions: aborts what a previous process left open
            extra["store_partition"] = _recover_store(source, self.topic, settings, producer)
        source.configure(topic=self.topic, producer=producer, **extra)

    def _send_failure(self, exc: BaseException) -> None:
        if self._writer is not None:
            _report(self._writer, exc)

    def _watch_parent(self, request_stop: Callable[[], None]) -> None:
        while os.getppid() == self._parent_pid:
            time.sleep(0.5)
        logger.warning('The application of source "%s" is gone: stopping the source', self.name)
        request_stop()
        time.sleep(self.shutdown_timeout)
        os._exit(1)


class SourceManager:
    """The sources of an application, each run in its own process.

    >>> from streamspark.sources.core.csv import CSVSource
    >>> manager = SourceManager()
    >>> source = CSVSource("data.csv", name="readings")
    >>> process = manager.register(source, default_source_topic(source), {"bootstrap.servers": "127.0.0.1:9092"},
    ...                            consumer_group="app")
    >>> [t.name for t in manager.topics], manager.is_alive(), manager.all_finished()
    (['source__readings'], False, False)
    """

    def __init__(self) -> None:
        self.processes: list[SourceProcess] = []

    @property
    def sources(self) -> list[BaseSource]:
        return [p.source for p in self.processes]

    @property
    def topics(self) -> list[Topic]:
        return [p.topic for p in self.processes]

    def register(
        self,
        source: BaseSource,
        topic: Topic,
        producer_config: Mapping[str, Any],
        *,
        consumer_config: Optional[Mapping[str, Any]] = None,
        consumer_group: str,
        processing_guarantee: ProcessingGuarantee = "at-least-once",
        request_timeout: float = 30.0,
        loglevel: Optional[Union[int, LogLevel]] = None,
    ) -> SourceProcess:
        """Add a source; it starts with the next :meth:`start`.

        :param source: the source (each source once, each topic for one source only).
        :param topic: the topic it produces to (the application creates it before starting).
        :param producer_config: librdkafka settings of its producer (connection + producer settings).
        :param consumer_config: librdkafka settings for reading a stateful source's changelog
            back (default: the connection settings of ``producer_config``).
        :param consumer_group: the application's consumer group.
        :param processing_guarantee: ``"exactly-once"`` makes stateful sources produce in
            Kafka transactions, committed with their state.
        :param request_timeout: timeout of broker calls and flushes in the source's process.
        :param loglevel: level of the ``streamspark`` logger in the source's process
            (default: this process's).
        :raises ValueError: the source, or another source on the same topic, is already registered.
        """
        if any(p.source is source for p in self.processes):
            raise ValueError(f'Source "{source_name(source)}" is already registered')
        if any(p.topic.name == topic.name for p in self.processes):
            raise ValueError(f'Topic "{topic.name}" is already used by another source')
        if isinstance(source, StatefulSource) and any(
            isinstance(p.source, StatefulSource) and p.source.store_name == source.store_name for p in self.processes
        ):
            raise ValueError(f'A stateful source named "{source.name}" is already registered: names must be unique')
        if processing_guarantee not in ("at-least-once", "exactly-once"):
            raise ValueError(f'processing_guarantee must be "at-least-once" or "exactly-once", got {processing_guarantee!r}')
        settings = SourceSettings(
            producer_config=dict(producer_config),
            consumer_config=dict(consumer_config) if consumer_config is not None else connection_settings(producer_config),
            consumer_group=consumer_group,
            exactly_once=processing_guarantee == "exactly-once",
            request_timeout=request_timeout,
            loglevel=loglevel if loglevel is not None else logger.getEffectiveLevel(),
        )
        process = SourceProcess(source, topic, settings)
        self.processes.append(process)
        return process

    def start(self) -> None:
        """Start every registered source not started yet."""
        for process in self.processes:
            if not process.started:
                process.start()

    def is_alive(self) -> bool:
        """True while at least one source's process runs."""
        return any(p.is_alive() for p in self.processes)

    def all_finished(self) -> bool:
        """True when there are sources and every one's process ended without error."""
        return bool(self.processes) and all(p.finished for p in self.processes)

    def raise_for_error(self) -> None:
        """Raise :class:`SourceException` for the first source that failed."""
        for process in self.processes:
            process.raise_for_error()

    def stop(self, timeout: Optional[float] = None) -> None:
        """Stop every running source: SIGTERM to all, wait for each up to ``timeout`` (default:
        its ``shutdown_timeout``), then SIGKILL what is left. Does not raise: call
        :meth:`raise_for_error` afterwards to learn about failures (a killed source is one)."""
        running = [p for p in self.processes if p.is_alive()]
        for process in running:
            process.terminate()
        started = time.monotonic()
        for process in running:
            limit = process.shutdown_timeout if timeout is None else timeout
            process.join(max(0.0, started + limit - time.monotonic()))
        for process in running:
            process.kill()

    def __enter__(self) -> "SourceManager":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()


# --- in the source's process ---------------------------------------------------------------


#: what a source's process sends first, once it has imported the program's main module
_ENTERED = "entered"


def _process_main(payload: bytes, loglevel: Union[int, LogLevel], conn: Connection) -> None:
    """What a spawned source process runs: rebuild the :class:`SourceProcess` and run it."""
    configure_logging(loglevel, pid=True)
    try:
        try:  # the process got past importing the program's main module
            conn.send(_ENTERED)
        except Exception:  # the parent is gone: nobody to tell
            pass
        try:
            process: SourceProcess = pickle.loads(payload)
        except BaseException as exc:  # e.g. the source's class cannot be imported here
            logger.error("A source could not be loaded in its process: %r", exc)
            _report(conn, exc)
            raise SystemExit(1)
        process._writer = conn  # noqa: SLF001
        process.run()
    finally:
        conn.close()


def _recover_store(
    source: StatefulSource, topic: Topic, settings: SourceSettings, producer: SourceProducer
) -> SourceStorePartition:
    name = changelog_topic_name(settings.consumer_group, source.store_name)
    try:
        replication = topic.broker_config.replication_factor
    except TopicConfigurationError:  # the topic was not checked on the broker
        replication = topic.create_config.replication_factor if topic.create_config is not None else 1
    changelog = Topic(
        name,
        create_config=TopicConfig(
            num_partitions=source.store_partitions_count,
            replication_factor=replication,
            extra_config={"cleanup.policy": "compact"},
        ),
    )
    admin = TopicAdmin(ConnectionConfig.from_librdkafka_dict(settings.consumer_config, ignore_extras=True))
    admin.create_topics([changelog], timeout=settings.request_timeout, finalize_timeout=settings.request_timeout)
    partition = SourceStorePartition(name, producer, source.name, partition=source.assigned_store_partition)
    partition.recover(settings.consumer_config, timeout=settings.request_timeout)
    return partition


def _report(conn: Connection, exc: BaseException) -> None:
    """Send the exception, its traceback and (if it pickles) the exception itself to the parent."""
    try:
        pickled: Optional[bytes] = pickle.dumps(exc)
    except Exception:
        pickled = None
    try:
        conn.send(
            {
                "error": f"{type(exc).__name__}: {exc}",
                "traceback": "".join(traceback.format_exception(exc)),
                "pickled": pickled,
            }
        )
    except Exception as send_error:  # the parent is gone: nobody to tell
        logger.debug("Could not report the source's error: %s", send_error)
