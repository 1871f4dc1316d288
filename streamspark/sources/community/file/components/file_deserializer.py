"""Choose how a file stream becomes records, from a format name or a :class:`Format`."""

from __future__ import annotations

from typing import BinaryIO, Callable, Iterable, Optional, Union

from ..compressions import CompressionName
from ..formats import FORMATS, Format, FormatName

__all__ = ("raw_filestream_deserializer",)


def raw_filestream_deserializer(
    formatter: Union[Format, FormatName], compression: Optional[CompressionName]
) -> Callable[[BinaryIO], Iterable[object]]:
    """A function reading a raw (possibly compressed) file stream into records.

    >>> import io
    >>> read = raw_filestream_deserializer("json", None)
    >>> list(read(io.BytesIO(b'{"_value": 1}')))
    [{'_value': 1}]

    :raises ValueError: the format name is unknown.
    """
    if isinstance(formatter, Format):
        return formatter.read
    format_class = FORMATS.get(formatter) if isinstance(formatter, str) else None
    if format_class is None:
        raise ValueError(
            f'Invalid format name "{formatter}"; use one of {", ".join(sorted(FORMATS))} or an instance of a Format subclass'
        )
    return format_class(compression=compression).read  # type: ignore[call-arg]
