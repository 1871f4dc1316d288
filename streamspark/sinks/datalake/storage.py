"""Where the lake's files live: one fsspec filesystem plus a root path.

The prefix decides the backend:

- a plain path or ``file://`` → the local filesystem (relative paths are made absolute);
- ``s3://bucket/prefix`` → S3 or any S3-compatible store (MinIO, SeaweedFS…) through s3fs;
- ``gs://bucket/prefix`` → Google Cloud Storage through gcsfs;
- ``az://container/prefix`` or ``abfs://container/prefix`` → Azure Blob through adlfs.

Credentials come from ``storage_options`` (passed to the fsspec filesystem), else from
the ``Quix__BlobStorage__Connection__Json`` environment variable (see
:func:`options_from_connection_json`), else from each SDK's usual environment variables
and config files (``AWS_ACCESS_KEY_ID``…, ``GOOGLE_APPLICATION_CREDENTIALS``,
``AZURE_STORAGE_CONNECTION_STRING``…).

>>> storage = LakeStorage("/tmp/lake")
>>> storage.url("sensor_readings/year=2024/part-0.parquet")
'file:///tmp/lake/sensor_readings/year=2024/part-0.parquet'
"""

from __future__ import annotations

import json
import os
import uuid
from typing import Any, Optional

__all__ = ("LakeStorage", "options_from_connection_json", "CONNECTION_JSON_ENV")

CONNECTION_JSON_ENV = "Quix__BlobStorage__Connection__Json"

_SCHEMES = {"s3": "s3", "s3a": "s3", "gs": "gcs", "gcs": "gcs", "az": "azure", "abfs": "azure", "abfss": "azure", "file": "local"}


def _get(config: dict[str, Any], *names: str) -> Any:
    lowered = {k.lower().replace("_", ""): v for k, v in config.items()}
    for name in names:
        value = lowered.get(name.lower().replace("_", ""))
        if value not in (None, ""):
            return value
    return None


def options_from_connection_json(raw: str) -> tuple[Optional[str], dict[str, Any]]:
    """Read a blob-storage connection JSON: ``(bucket URL or None, fsspec options)``.

    Keys are matched case-insensitively, with or without underscores::

        {"provider": "s3", "bucket": "lake", "accessKeyId": "…", "secretAccessKey": "…",
         "region": "eu-west-1", "endpointUrl": "http://127.0.0.1:8333"}    # S3 / MinIO
        {"provider": "azure", "container": "lake", "connectionString": "…"}   # or accountName + accountKey
        {"provider": "gcs", "bucket": "lake", "project": "…", "credentialsJson": {…}}
        {"provider": "local", "path": "/data/lake"}

    >>> options_from_connection_json('{"provider": "minio", "bucket": "b", "accessKey": "k", "secretKey": "s", '
    ...                              '"endpoint": "http://127.0.0.1:9000"}')
    ('s3://b', {'key': 'k', 'secret': 's', 'client_kwargs': {'endpoint_url': 'http://127.0.0.1:9000'}})
    """
    try:
        config = json.loads(raw)
    except ValueError as exc:
        raise ValueError(f"{CONNECTION_JSON_ENV} is not valid JSON: {exc}") from exc
    if not isinstance(config, dict):
        raise ValueError(f"{CONNECTION_JSON_ENV} must be a JSON object")
    provider = str(_get(config, "provider", "type", "storageType") or "").lower()
    bucket = _get(config, "bucket", "bucketName", "container", "containerName")
    options: dict[str, Any] = {}
    if provider in ("s3", "aws", "minio", "s3compatible"):
        if _get(config, "accessKeyId", "accessKey") is not None:
            options["key"] = _get(config, "accessKeyId", "accessKey")
            options["secret"] = _get(config, "secretAccessKey", "secretKey")
        client: dict[str, Any] = {}
        if _get(config, "endpointUrl", "endpoint", "serviceUrl") is not None:
            client["endpoint_url"] = _get(config, "endpointUrl", "endpoint", "serviceUrl")
        if _get(config, "region", "regionName") is not None:
            client["region_name"] = _get(config, "region", "regionName")
        if client:
            options["client_kwargs"] = client
        return (f"s3://{bucket}" if bucket else None), options
    if provider in ("azure", "azureblob", "blob", "adls"):
        for ours, names in (
            ("connection_string", ("connectionString",)),
            ("account_name", ("accountName",)),
            ("account_key", ("accountKey",)),
            ("sas_token", ("sasToken",)),
        ):
            if _get(config, *names) is not None:
                options[ours] = _get(config, *names)
        return (f"az://{bucket}" if bucket else None), options
    if provider in ("gcs", "gcp", "google"):
        if _get(config, "project", "projectId") is not None:
            options["project"] = _get(config, "project", "projectId")
        creds = _get(config, "credentialsJson", "credentials", "token")
        if creds is not None:
            options["token"] = json.loads(creds) if isinstance(creds, str) and creds.strip().startswith("{") else creds
        return (f"gs://{bucket}" if bucket else None), options
    if provider in ("local", "file", "filesystem"):
        path = _get(config, "path", "rootPath", "root")
        return (os.path.abspath(path) if path else None), options
    raise ValueError(f"{CONNECTION_JSON_ENV}: unknown provider {provider!r} (s3, minio, azure, gcs or local)")


class LakeStorage:
    """An fsspec filesystem rooted at the lake prefix; picklable (the filesystem is built lazily).

    :param prefix: the lake root (see the module doc for the schemes).
    :param storage_options: options for the fsspec filesystem (credentials, endpoint…).
    """

    def __init__(self, prefix: str, storage_options: Optional[dict[str, Any]] = None) -> None:
        options = dict(storage_options or {})
        scheme = prefix.split("://", 1)[0].lower() if "://" in prefix else ""
        if not scheme and not storage_options and os.environ.get(CONNECTION_JSON_ENV):
            base, options = options_from_connection_json(os.environ[CONNECTION_JSON_ENV])
            if base:
                prefix = f"{base.rstrip('/')}/{prefix.strip('/')}"
                scheme = prefix.split("://", 1)[0].lower() if "://" in prefix else ""
        if scheme and scheme not in _SCHEMES:
            raise ValueError(f"Unsupported storage scheme {scheme!r} in {prefix!r}: use a path, file://, s3://, gs:// or az://")
        self.kind = _SCHEMES.get(scheme, "local")
        if self.kind == "local":
            path = prefix.split("://", 1)[1] if scheme else prefix
            self.root = os.path.abspath(path)
            self.protocol = "file"
        else:
            self.root = prefix.split("://", 1)[1].strip("/")
            self.protocol = {"s3a": "s3", "az": "abfs", "abfss": "abfs", "gcs": "gs"}.get(scheme, scheme)
        self.options = options
        self._fs: Any = None

    @property
    def fs(self) -> Any:
        if self._fs is None:
            import fsspec

            protocol = self.protocol
            try:
                self._fs = fsspec.filesystem(protocol, **self.options)
            except ImportError as exc:
                extra = {"s3": "s3", "gs": "gcs", "abfs": "azure"}.get(protocol, "datalake")
                raise ImportError(f"{exc}: install streamspark[{extra}] to use {self.protocol}:// storage") from exc
        return self._fs

    def path(self, relative: str) -> str:
        """The filesystem path (no scheme) of ``relative`` under the root."""
        return f"{self.root.rstrip('/')}/{relative.lstrip('/')}" if relative else self.root

    def url(self, relative: str) -> str:
        """The full URL of ``relative`` (what the catalog records)."""
        path = self.path(relative)
        return f"{self.protocol}://{path}"

    @property
    def bucket(self) -> Optional[str]:
        return None if self.kind == "local" else self.root.split("/", 1)[0]

    def check(self, create: bool = True) -> None:
        """Make sure the root is reachable (and the bucket exists, created when ``create``)."""
        fs = self.fs
        if self.kind == "local":
            os.makedirs(self.root, exist_ok=True)
            return
        bucket = self.bucket
        try:
            exists = fs.exists(bucket)
            if not exists:
                if not create:
                    raise FileNotFoundError(f"Bucket {self.protocol}://{bucket} does not exist (auto_create_bucket=False)")
                fs.mkdir(bucket)
        except FileNotFoundError:
            raise
        except Exception as exc:
            raise ConnectionError(f"Cannot reach {self.protocol}://{bucket}: {type(exc).__name__}: {exc}") from exc

    def write_bytes(self, relative: str, data: bytes) -> None:
        """Write an object atomically (object stores PUT atomically; local files are renamed into place)."""
        path = self.path(relative)
        if self.kind == "local":
            os.makedirs(os.path.dirname(path), exist_ok=True)
            tmp = f"{os.path.dirname(path)}/.tmp-{uuid.uuid4().hex}-{os.path.basename(path)}"
            with open(tmp, "wb") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, path)
            return
        self.fs.pipe_file(path, data)

    def exists(self, relative: str) -> bool:
        return bool(self.fs.exists(self.path(relative)))

    def read_bytes(self, relative: str) -> bytes:
        return bytes(self.fs.cat_file(self.path(relative)))

    def delete(self, relative: str) -> None:
        try:
            self.fs.rm_file(self.path(relative))
        except FileNotFoundError:
            pass

    def list_dirs(self, relative: str) -> list[str]:
        """Names of the sub-directories of ``relative`` (empty when it does not exist)."""
        try:
            entries = self.fs.ls(self.path(relative), detail=True)
        except FileNotFoundError:
            return []
        return [e["name"].rstrip("/").rsplit("/", 1)[-1] for e in entries if e.get("type") == "directory"]

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state["_fs"] = None
        return state

    def __repr__(self) -> str:
        return f"LakeStorage({self.url('')!r})"
