"""AWS client failures (``botocore``) as :class:`~streamspark.sources.SourceInputError` s that
name the source and what it could not reach.

>>> class Refused(Exception):
...     response = {"Error": {"Code": "AccessDenied"}}
>>> str(aws_error(Refused(), "s3_lake", 'the S3 bucket "lake"'))
'Source "s3_lake" cannot read the S3 bucket "lake": access denied with these credentials'
"""

from __future__ import annotations

from ..base.exceptions import SourceInputError

__all__ = ("aws_error",)

#: error codes of a missing bucket, stream, ...
_MISSING = ("404", "NoSuchBucket", "NotFound", "ResourceNotFoundException")
#: error codes of refused credentials
_DENIED = ("403", "AccessDenied", "Forbidden", "AccessDeniedException")


def aws_error(exc: Exception, source: str, what: str, missing: type[SourceInputError] = SourceInputError) -> SourceInputError:
    """The error a source raises for ``exc``, an AWS client's ``ClientError`` (its error code says
    what went wrong: a missing resource gives ``missing``) or ``BotoCoreError`` (e.g. an
    unreachable endpoint)."""
    response = getattr(exc, "response", None)
    code = str(response.get("Error", {}).get("Code", "")) if isinstance(response, dict) else ""
    if code in _MISSING:
        return missing(source, what, "it does not exist")
    if code in _DENIED:
        return SourceInputError(source, what, "access denied with these credentials")
    return SourceInputError(source, what, str(exc))
