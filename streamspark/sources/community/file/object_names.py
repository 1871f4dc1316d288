"""Object names in object stores (S3 keys, Azure blob names) from the paths files sources take.

Object stores have no folders: a "folder" is a name prefix ending in ``/``.

>>> object_name("/exports/readings/"), object_name(".")
('exports/readings', '')
>>> folder_prefix("exports/readings"), folder_prefix("")
('exports/readings/', '')
>>> [is_under(name, "exports/r") for name in ("exports/r/1.json", "exports/readings/1.json", "exports/r")]
[True, False, True]
"""

from __future__ import annotations

from pathlib import Path
from typing import Union

__all__ = ("object_name", "folder_prefix", "is_under")


def object_name(filepath: Union[str, Path]) -> str:
    """An object's name (or a name prefix) from a path: no leading or trailing ``/``; ``""`` for
    the whole bucket or container."""
    name = str(filepath).strip("/")
    return "" if name == "." else name


def folder_prefix(filepath: Union[str, Path]) -> str:
    """The name prefix of the objects "in" a folder: ``<name>/`` (``""`` for the whole store)."""
    name = object_name(filepath)
    return f"{name}/" if name else ""


def is_under(name: str, filepath: Union[str, Path]) -> bool:
    """Whether the object ``name`` is the object ``filepath`` names or lies in that "folder"."""
    prefix = object_name(filepath)
    return prefix in ("", name) or name.startswith(prefix + "/")
