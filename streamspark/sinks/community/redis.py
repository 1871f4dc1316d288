"""``RedisSink``: each record becomes ``SET <key> <value>``.

Guarantee: exactly-once in effect. A flush is one ``MULTI/EXEC`` transaction (all of a task's
records or none), and a replayed micro-batch SETs the same keys to the same values.

>>> sink = RedisSink(host="localhost", port=6379, db=0)
"""

from __future__ import annotations

import json
from typing import Any, Callable, Optional, Union

from ..base._delivery import import_optional
from ..base.batch import SinkBatch
from ..base.sink import BatchingSink, ClientConnectFailureCallback, ClientConnectSuccessCallback

__all__ = ("RedisSink",)


class RedisSink(BatchingSink):
    """Write records to Redis with SET.

    :param value_serializer: value → str/bytes (default ``json.dumps``).
    :param key_serializer: ``callable(key, value)`` → str/bytes; default: the message key as is
        (it must then be str or bytes).
    :param password: Redis password.
    :param socket_timeout: seconds.
    :param kwargs: passed to ``redis.Redis``.

    Needs ``pip install "streamspark[redis]"``.
    """

    def __init__(
        self,
        host: str,
        port: int,
        db: int,
        value_serializer: Callable[[Any], Union[bytes, str]] = json.dumps,
        key_serializer: Optional[Callable[[Any, Any], Union[bytes, str]]] = None,
        password: Optional[str] = None,
        socket_timeout: float = 30.0,
        on_client_connect_success: Optional[ClientConnectSuccessCallback] = None,
        on_client_connect_failure: Optional[ClientConnectFailureCallback] = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(on_client_connect_success, on_client_connect_failure)
        # what ``kwargs`` name wins over the parameters above
        self._params = {
            "host": host,
            "port": port,
            "db": db,
            "password": password,
            "socket_timeout": socket_timeout,
            "socket_connect_timeout": socket_timeout,
            **kwargs,
        }
        self._value_serializer = value_serializer
        self._key_serializer = key_serializer
        self._client: Any = None

    def setup(self) -> None:
        redis = import_optional("redis", "RedisSink", "redis")
        self._client = redis.Redis(**self._params)
        try:
            self._client.ping()
        except redis.RedisError as exc:
            raise ConnectionError(f"Redis at {self._params['host']}:{self._params['port']} is unreachable: {exc}") from None

    def write(self, batch: SinkBatch) -> None:
        self._write([batch])

    def flush(self) -> None:
        """All pending batches in one MULTI/EXEC."""
        self._flush_together(self._write)

    def _write(self, batches: list[SinkBatch]) -> None:
        redis = import_optional("redis", "RedisSink", "redis")
        if self._client is None:
            self.setup()
        pipe = self._client.pipeline(transaction=True)
        for batch in batches:
            for item in batch:
                key = self._key_serializer(item.key, item.value) if self._key_serializer else item.key
                if not isinstance(key, (str, bytes)):
                    raise TypeError(
                        f"RedisSink needs str or bytes keys, got {type(key).__name__} at "
                        f"{batch.topic}[{batch.partition}]@{item.offset} (set key_serializer)"
                    )
                pipe.set(key, self._value_serializer(item.value))
        try:
            pipe.execute()
        except redis.ConnectionError as exc:
            raise ConnectionError(f"Redis write failed: {exc}") from None
