"""The server's row indexes: built once per dataset version, big ones in the background.

A dataset of up to ``INLINE_ROWS`` rows is indexed inside the request that first needs it (a
fraction of a second); a bigger one on the cache's one worker thread, while the page says it
is indexing and reloads itself, so no request waits out a 100,000-row build. The newest
``KEPT`` indexes are kept; a new version of a dataset is a new key.

>>> cache = IndexCache()
>>> cache.get(("ds", 1), lambda: "index", rows=10)
'index'
>>> cache.get(("ds", 1), lambda: "other", rows=10)  # kept
'index'
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

__all__ = ["INLINE_ROWS", "KEPT", "IndexCache"]

INLINE_ROWS = 20_000
KEPT = 8


class IndexCache:
    """Indexes by key; ``get`` returns None while a big one is being built."""

    def __init__(self, kept: int = KEPT, inline_rows: int = INLINE_ROWS) -> None:
        self.kept = kept
        self.inline_rows = inline_rows
        self._lock = threading.Lock()
        self._found: OrderedDict[Hashable, Future[Any]] = OrderedDict()
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="whileai-index")

    def get(self, key: Hashable, build: Callable[[], Any], *, rows: int) -> Any:
        """The index under ``key`` (``build()`` makes it); None while it is being built.

        Raises:
            Exception: whatever ``build`` raised (the failed entry is dropped, so the next
                request tries again).
        """
        with self._lock:
            future = self._found.get(key)
            if future is None:
                if rows <= self.inline_rows:
                    future = Future()
                    inline = True
                else:
                    future = self._pool.submit(build)
                    inline = False
                self._found[key] = future
                while len(self._found) > self.kept:
                    self._found.popitem(last=False)
            else:
                inline = False
                self._found.move_to_end(key)
        if inline:
            try:
                future.set_result(build())
            except BaseException as exc:
                future.set_exception(exc)
        if not future.done():
            return None
        error = future.exception()
        if error is not None:
            with self._lock:
                if self._found.get(key) is future:
                    del self._found[key]
            raise error
        return future.result()

    def wait(self, key: Hashable, timeout: float | None = None) -> None:
        """Block until the index under ``key`` is built (for tests and benches)."""
        with self._lock:
            future = self._found.get(key)
        if future is not None:
            future.exception(timeout)
