"""Find a secret in text, files and directory trees: as it is, and inside base64 runs, zlib or
gzip streams and zip archives (a pickle holds its strings as they are)."""

from __future__ import annotations

import base64
import binascii
import io
import re
import zipfile
import zlib
from pathlib import Path
from typing import Union

__all__ = ("find_secret", "find_secret_in_tree")

_BASE64_RUN = re.compile(rb"[A-Za-z0-9+/_-]{16,}={0,2}")


def find_secret(data: Union[str, bytes], secret: str, depth: int = 3) -> list[str]:
    """Where ``secret`` shows in ``data``: ``"plain"``, ``"base64"``, ``"zlib"``, ``"zip:<member>"``
    (nested up to ``depth`` decodings). Empty when it does not.

    >>> import pickle
    >>> secret = "pa55word-x"
    >>> find_secret(base64.b64encode(pickle.dumps({"sasl.password": secret})), secret)
    ['base64']
    >>> find_secret(b"nothing here", secret)
    []
    """
    raw = data.encode() if isinstance(data, str) else bytes(data)
    needle = secret.encode()
    found: list[str] = []
    if needle in raw or needle.hex().encode() in raw:
        found.append("plain")
    if depth <= 0:
        return found
    for run in _BASE64_RUN.findall(raw):
        for decode in (base64.b64decode, base64.urlsafe_b64decode):
            try:
                decoded = decode(run + b"=" * (-len(run) % 4))
            except (binascii.Error, ValueError):
                continue
            if find_secret(decoded, secret, depth - 1):
                found.append("base64")
                break
    for wbits in (zlib.MAX_WBITS, 16 + zlib.MAX_WBITS, -zlib.MAX_WBITS):  # zlib, gzip, raw deflate
        try:
            inflated = zlib.decompressobj(wbits).decompress(raw, 50_000_000)
        except zlib.error:
            continue
        if inflated and find_secret(inflated, secret, depth - 1):
            found.append("zlib")
    if raw[:2] == b"PK":
        try:
            with zipfile.ZipFile(io.BytesIO(raw)) as archive:
                for name in archive.namelist():
                    if find_secret(archive.read(name), secret, depth - 1):
                        found.append(f"zip:{name}")
        except (zipfile.BadZipFile, OSError):
            pass
    return found


def find_secret_in_tree(root: Path, secret: str) -> dict[str, list[str]]:
    """``{path: where}`` for every file under ``root`` (and file names) that shows ``secret``."""
    hits: dict[str, list[str]] = {}
    for path in sorted(root.rglob("*")):
        where = ["name"] if secret in path.name else []
        if path.is_file():
            where += find_secret(path.read_bytes(), secret)
        if where:
            hits[str(path)] = where
    return hits
