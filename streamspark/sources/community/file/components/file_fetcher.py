"""Serve files one after another while the next one downloads in the background."""

from __future__ import annotations

import logging
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import BinaryIO, Callable, Iterable, Iterator, Optional

__all__ = ("FileFetcher",)

logger = logging.getLogger(__name__)


class FileFetcher:
    """Iterate ``(path, stream)`` over ``filepaths``, fetching the next file while the current
    one is processed (one background thread).

    >>> import io
    >>> fetcher = FileFetcher(lambda p: io.BytesIO(p.name.encode()), [Path("a"), Path("b")])
    >>> [(p.name, s.read()) for p, s in fetcher]
    [('a', b'a'), ('b', b'b')]

    :param downloader: ``f(path) -> stream``; what it raises is raised by ``next()`` for that file.
    :param filepaths: the files, in processing order.
    """

    def __init__(self, downloader: Callable[[Path], BinaryIO], filepaths: Iterable[Path]) -> None:
        self._files = iter(filepaths)
        self._downloader = downloader
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="file-fetcher")
        self._stopped = False
        self._next: Optional[tuple[Path, Future[BinaryIO]]] = None
        self._fetch_next()

    def __iter__(self) -> Iterator[tuple[Path, BinaryIO]]:
        return self

    def __next__(self) -> tuple[Path, BinaryIO]:
        if self._stopped or self._next is None:
            self.stop()
            raise StopIteration
        path, future = self._next
        try:
            content = future.result()
        except BaseException:
            self.stop()
            raise
        self._fetch_next()
        return path, content

    def _fetch_next(self) -> None:
        try:
            path = next(self._files)
        except StopIteration:
            self._next = None
            return
        logger.debug("Fetching %s", path)
        self._next = (path, self._executor.submit(self._downloader, path))

    def stop(self) -> None:
        """Stop fetching (a download in progress is waited for, queued ones are cancelled)."""
        if not self._stopped:
            self._stopped = True
            self._executor.shutdown(wait=True, cancel_futures=True)
