"""``S3FileSink``: :class:`~.sink.FileSink` writing to an S3 bucket
(``pip install streamspark[s3]``).

>>> sink = S3FileSink(bucket="my-bucket", region_name="eu-west-1", directory="exports", format="parquet")
"""

from __future__ import annotations

from typing import Any, Optional, Union

from ...base.sink import ClientConnectFailureCallback, ClientConnectSuccessCallback
from .destinations import S3Destination
from .formats import Format, FormatName
from .sink import FileSink

__all__ = ("S3FileSink",)


class S3FileSink(FileSink):
    """Write batches as files to an S3 bucket.

    :param bucket: the bucket name.
    :param aws_access_key_id: default: the ``AWS_ACCESS_KEY_ID`` environment variable.
    :param aws_secret_access_key: default: the ``AWS_SECRET_ACCESS_KEY`` environment variable.
    :param region_name: default: ``AWS_REGION`` or ``AWS_DEFAULT_REGION``.
    :param endpoint_url: an S3-compatible endpoint; default: ``AWS_ENDPOINT_URL_S3``.
    :param directory: the base directory (object key prefix) in the bucket.
    :param format: ``"json"``, ``"parquet"`` or a :class:`~.formats.Format`. Default ``"json"``.
    :param on_client_connect_success: called after the bucket is checked in ``setup()``.
    :param on_client_connect_failure: called with the exception when the check fails.
    :param kwargs: more options for the S3 file system client.
    """

    def __init__(
        self,
        bucket: str,
        aws_access_key_id: Optional[str] = None,
        aws_secret_access_key: Optional[str] = None,
        region_name: Optional[str] = None,
        endpoint_url: Optional[str] = None,
        directory: str = "",
        format: Union[FormatName, Format] = "json",
        on_client_connect_success: Optional[ClientConnectSuccessCallback] = None,
        on_client_connect_failure: Optional[ClientConnectFailureCallback] = None,
        **kwargs: Any,
    ) -> None:
        destination = S3Destination(bucket, aws_access_key_id, aws_secret_access_key, region_name, endpoint_url, **kwargs)
        super().__init__(directory, format, destination, on_client_connect_success, on_client_connect_failure)
