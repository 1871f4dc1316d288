"""``S3Destination``: objects in an S3 bucket or an S3-compatible store.

>>> d = S3Destination("my-bucket", region_name="eu-west-1")
"""

from __future__ import annotations

import os
from os import getenv
from typing import Any, Optional

from .base import ObjectStoreDestination

__all__ = ("S3Destination", "S3BucketNotFoundError", "S3BucketAccessDeniedError")


class S3BucketNotFoundError(Exception):
    """The S3 bucket does not exist."""


class S3BucketAccessDeniedError(Exception):
    """The S3 bucket exists but these credentials may not use it."""


class S3Destination(ObjectStoreDestination):
    """Objects in an S3 bucket (or an S3-compatible store).

    The credentials default to the environment as it is when this module is imported:
    ``AWS_ACCESS_KEY_ID``, ``AWS_SECRET_ACCESS_KEY``, ``AWS_REGION`` (else
    ``AWS_DEFAULT_REGION``) and ``AWS_ENDPOINT_URL_S3``; those still unset then are read
    again when the destination is created (``AWS_ENDPOINT_URL`` too, and ``AWS_SESSION_TOKEN``
    is used by the S3 client itself).

    :param bucket: the bucket (it must exist).
    :param kwargs: passed to the fsspec S3 filesystem (``s3fs``).
    """

    _scheme = "s3"
    _what = "S3 bucket"
    _not_found = S3BucketNotFoundError
    _denied = S3BucketAccessDeniedError

    def __init__(
        self,
        bucket: str,
        aws_access_key_id: Optional[str] = getenv("AWS_ACCESS_KEY_ID"),
        aws_secret_access_key: Optional[str] = getenv("AWS_SECRET_ACCESS_KEY"),
        region_name: Optional[str] = getenv("AWS_REGION", getenv("AWS_DEFAULT_REGION")),
        endpoint_url: Optional[str] = getenv("AWS_ENDPOINT_URL_S3"),
        **kwargs: Any,
    ) -> None:
        env = os.environ
        client: dict[str, Any] = {}
        region = region_name or env.get("AWS_REGION") or env.get("AWS_DEFAULT_REGION")
        endpoint = endpoint_url or env.get("AWS_ENDPOINT_URL_S3") or env.get("AWS_ENDPOINT_URL")
        if region:
            client["region_name"] = region
        if endpoint:
            client["endpoint_url"] = endpoint
        options: dict[str, Any] = {"client_kwargs": client, "skip_instance_cache": True, **kwargs}
        key = aws_access_key_id or env.get("AWS_ACCESS_KEY_ID")
        if key:
            options["key"] = key
            options["secret"] = aws_secret_access_key or env.get("AWS_SECRET_ACCESS_KEY")
        super().__init__(bucket, options)
