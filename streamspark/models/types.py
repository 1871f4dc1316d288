"""Type aliases for message parts."""

from __future__ import annotations

from typing import Any, List, Optional, Tuple, Union

__all__ = ("HeaderValue", "HeadersTuples", "Headers", "MessageKey", "MessageValue")

HeaderValue = Optional[Union[str, bytes]]
HeadersTuples = List[Tuple[str, HeaderValue]]
Headers = Optional[HeadersTuples]
MessageKey = Any
MessageValue = Any
