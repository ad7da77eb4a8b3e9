"""A push in progress: the body's bytes to a temp part, checked as they come, then a dataset.

The route only moves chunks (``async for chunk in request.stream()``) and runs the CPU work off
the event loop; the rules live here: the request and storage limits, the rows read strictly
(``framing.LineCounter``), no teacher-only ``privileged`` block unless ``keep_privileged``, and
the dataset made in one transaction (``datasets.create``) or nothing left behind (``abort``).
"""

from __future__ import annotations

from typing import Any

from whileai.server.services import Account, Store, datasets
from whileai.server.services.framing import LineCounter
from whileai.server.services.privileged import PrivilegedLines, refusal
from whileai.server.services.problems import QuotaExceeded, TooLarge
from whileai.server.store.blobs import PartWriter

__all__ = ["BATCH_BYTES", "Upload"]

BATCH_BYTES = 1024 * 1024  # bytes of a push parsed at a time (by a worker thread)


class Upload:
    """One push: :meth:`begin`, then :meth:`add` each chunk (and :meth:`parse` when it says so),
    then :meth:`finish` for the dataset's entry, or :meth:`abort` on any failure."""

    def __init__(self, store: Store, account: Account, new: datasets.NewDataset, *,
                 free: int, keep_privileged: bool) -> None:
        self._store, self._account, self._new = store, account, new
        self._limit = store.config.max_request_bytes  # a declared length past it got 413
        self._free = free
        self._keep_privileged = keep_privileged
        self._lines = LineCounter(max_rows=store.config.max_rows_per_dataset)
        self._teacher_only = PrivilegedLines()
        self._writer = PartWriter(store.config.tmp_dir)
        self._pending: list[bytes] = []  # bytes stored but not yet checked
        self._size = 0

    @classmethod
    def begin(cls, store: Store, account: Account, new: datasets.NewDataset, *,
              keep_privileged: bool) -> Upload:
        """Refuse the push before any byte moves (``datasets.check_new``), else start it."""
        free = datasets.check_new(store, account, new)
        return cls(store, account, new, free=free, keep_privileged=keep_privileged)

    def add(self, chunk: bytes) -> bool:
        """Store ``chunk``; ``True`` when enough is pending that :meth:`parse` should run.

        Raises:
            TooLarge: the upload passed the most the server takes per request.
            QuotaExceeded: it passed the storage left on the account.
        """
        self._writer.write(chunk)
        self._teacher_only.feed(chunk)
        written = self._writer.bytes
        if written > self._limit:
            raise TooLarge(f"the upload passed {self._limit} bytes, the most this "
                           "server takes per request")
        if written > self._free:
            raise QuotaExceeded(f"storage quota: this upload passed the "
                                f"{self._free} bytes left on the account; nothing was stored")
        self._pending.append(chunk)
        self._size += len(chunk)
        return self._size >= BATCH_BYTES

    def parse(self) -> None:
        """Check the rows pending (CPU work: the route runs it in a worker thread)."""
        self._lines.feed(b"".join(self._pending))
        self._pending, self._size = [], 0

    def finish(self) -> dict[str, Any]:
        """Check the rest and make the dataset; its entry.

        Raises:
            ServiceError: a row is malformed, the row quota is passed, or rows hold a
                ``privileged`` block (without ``keep_privileged``).
        """
        self.parse()
        tail = self._lines.close()
        held = self._teacher_only.close()
        if held and not self._keep_privileged:
            raise refusal(held, "this upload")
        if tail:
            self._writer.write(tail)
        return datasets.create(self._store, self._account, self._new, self._writer,
                               self._lines.rows)

    def abort(self) -> None:
        """Remove what was written (the push failed or was cut off)."""
        self._writer.abort()
