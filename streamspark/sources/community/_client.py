"""Import a community source's client library, naming the extra that installs it when missing."""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ("import_client",)


def import_client(module: str, source: str, extra: str) -> Any:
    """The client module ``module``, or ``ImportError`` naming the extra to install.

    >>> import_client("json", "MySource", "json").__name__
    'json'
    >>> import_client("no_such_client", "MySource", "mine")
    Traceback (most recent call last):
    ...
    ImportError: MySource needs the 'no_such_client' package: pip install "streamspark[mine]"
    """
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ImportError(f'{source} needs the {module.split(".")[0]!r} package: pip install "streamspark[{extra}]"') from exc
