"""``S3FileSource``: the records of files in an S3 bucket (or an S3-compatible store).

>>> source = S3FileSource("exports/readings", bucket="lake", region_name="eu-west-1")
>>> source.name
's3_lake_readings'

Needs ``pip install "streamspark[s3]"`` (the S3 client, ``botocore``).
"""

from __future__ import annotations

import io
from os import getenv
from pathlib import Path
from typing import Any, BinaryIO, Callable, Iterable, Iterator, Optional, Union

from ...base.exceptions import SourceInputError
from ...base.source import ClientConnectFailureCallback, ClientConnectSuccessCallback
from .._client import import_client
from ..aws_errors import aws_error
from .base import FileSource
from .compressions import CompressionName
from .formats import Format, FormatName
from .object_names import folder_prefix, is_under, object_name

__all__ = ("S3FileSource", "MissingS3Bucket")


class MissingS3Bucket(SourceInputError):
    """The S3 bucket of an :class:`S3FileSource` does not exist."""


class S3FileSource(FileSource):
    """Produce the records of the objects under a key prefix of an S3 bucket (or of one object).

    ``filepath`` is a "folder" (every object whose key is under ``<filepath>/``, in key
    order) or one object's key; the objects are read like :class:`LocalFileSource`'s files
    (each whole into memory, the next one while the current one is produced).

    ``setup()`` checks the bucket: a missing one stops the source with
    :class:`MissingS3Bucket`, an unreachable endpoint or refused credentials with
    :class:`~streamspark.sources.SourceInputError`, both naming the source and the bucket.

    :param filepath: the key prefix ("folder") to read, or one object's key.
    :param bucket: the bucket's name only (e.g. ``"my-bucket"``).
    :param region_name: the AWS region (default: ``AWS_REGION`` when this module is imported).
    :param aws_access_key_id: default: ``AWS_ACCESS_KEY_ID`` when this module is imported
        (else the S3 client's own credential lookup).
    :param aws_secret_access_key: default: ``AWS_SECRET_ACCESS_KEY`` when this module is imported.
    :param endpoint_url: an S3-compatible endpoint (e.g. a local server); default:
        ``AWS_ENDPOINT_URL_S3`` when this module is imported.
    :param name: the source's name (default ``s3_<bucket>_<last part of filepath>``).

    The other parameters are :class:`FileSource`'s.
    """

    _process_local_attributes = ("_client",)

    def __init__(
        self,
        filepath: Union[str, Path],
        bucket: str,
        region_name: Optional[str] = getenv("AWS_REGION"),
        aws_access_key_id: Optional[str] = getenv("AWS_ACCESS_KEY_ID"),
        aws_secret_access_key: Optional[str] = getenv("AWS_SECRET_ACCESS_KEY"),
        endpoint_url: Optional[str] = getenv("AWS_ENDPOINT_URL_S3"),
        key_setter: Optional[Callable[[object], object]] = None,
        value_setter: Optional[Callable[[object], object]] = None,
        timestamp_setter: Optional[Callable[[object], int]] = None,
        has_partition_folders: bool = False,
        file_format: Union[Format, FormatName] = "json",
        compression: Optional[CompressionName] = None,
        replay_speed: float = 1.0,
        name: Optional[str] = None,
        shutdown_timeout: float = 30,
        on_client_connect_success: Optional[ClientConnectSuccessCallback] = None,
        on_client_connect_failure: Optional[ClientConnectFailureCallback] = None,
    ) -> None:
        super().__init__(
            filepath=filepath,
            key_setter=key_setter,
            value_setter=value_setter,
            timestamp_setter=timestamp_setter,
            file_format=file_format,
            compression=compression,
            has_partition_folders=has_partition_folders,
            replay_speed=replay_speed,
            name=name or f"s3_{bucket}_{Path(filepath).name}",
            shutdown_timeout=shutdown_timeout,
            on_client_connect_success=on_client_connect_success,
            on_client_connect_failure=on_client_connect_failure,
        )
        self._bucket = bucket
        self._credentials = {
            "region_name": region_name,
            "aws_access_key_id": aws_access_key_id,
            "aws_secret_access_key": aws_secret_access_key,
            "endpoint_url": endpoint_url,
        }
        self._client: Any = None

    def _new_client(self) -> Any:
        session = import_client("botocore.session", "S3FileSource", "s3")
        config = import_client("botocore.config", "S3FileSource", "s3")
        return session.get_session().create_client(
            "s3",
            **{k: v for k, v in self._credentials.items() if v},
            config=config.Config(connect_timeout=10, retries={"max_attempts": 3, "mode": "standard"}),
        )

    def _check_bucket(self, client: Any) -> None:
        exceptions = import_client("botocore.exceptions", "S3FileSource", "s3")
        what = f'the S3 bucket "{self._bucket}"'
        try:
            client.head_bucket(Bucket=self._bucket)
        except (exceptions.ClientError, exceptions.BotoCoreError) as exc:
            raise aws_error(exc, self.name, what, missing=MissingS3Bucket) from exc

    def setup(self) -> None:
        """Create the S3 client and check the bucket exists."""
        if self._client is None:
            client = self._new_client()
            self._check_bucket(client)
            self._client = client

    def _file_label(self, filepath: Path) -> str:
        return f"s3://{self._bucket}/{object_name(filepath)}"

    def _keys(self, client: Any, prefix: str, delimiter: str = "") -> Iterator[dict[str, Any]]:
        paginator = client.get_paginator("list_objects_v2")
        yield from paginator.paginate(Bucket=self._bucket, Prefix=prefix, **({"Delimiter": delimiter} if delimiter else {}))

    def get_file_list(self, filepath: Path) -> Iterable[Path]:
        """The keys of the objects under ``filepath`` in key order (or ``filepath`` itself when
        it is an object's key)."""
        for page in self._keys(self._client, object_name(filepath)):
            for item in page.get("Contents", []):
                name = item["Key"]
                if is_under(name, filepath) and not name.endswith("/"):  # not "folder" marker objects
                    yield Path(name)

    def read_file(self, filepath: Path) -> BinaryIO:
        answer = self._client.get_object(Bucket=self._bucket, Key=object_name(filepath))
        return io.BytesIO(answer["Body"].read())

    def file_partition_counter(self) -> int:
        """The number of "folders" directly under ``filepath`` (checked with a client of its own:
        this runs in the application's process, before the source starts)."""
        client = self._new_client()
        try:
            self._check_bucket(client)
            return sum(len(page.get("CommonPrefixes", [])) for page in self._keys(client, folder_prefix(self._filepath), "/"))
        finally:
            client.close()
