"""Dataset bytes on disk: immutable parts, written through a temp file.

An upload streams into ``tmp/`` (``PartWriter``); ``finish`` moves it under ``parts/`` with a
fresh name that nothing references yet, and the caller then records it in the database in one
transaction. A crash before the commit leaves at most an unreferenced file, which ``sweep``
removes at the next start, so a reader never sees half a dataset.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import secrets
import threading
from collections.abc import Iterable
from pathlib import Path

from whileai.server.store.folder import FILE_MODE, make_private_dir

__all__ = ["SYNC_EVERY", "PartWriter", "remove_parts", "sweep"]

SYNC_EVERY = 64 * 1024 * 1024  # bytes between background flushes to disk during an upload


class PartWriter:
    """Stream bytes into a temp part, counting bytes and hashing as they go.

    Every ``SYNC_EVERY`` bytes a background thread flushes what is written so far to disk, so
    the disk works while the upload goes on and ``finish`` waits only for the last stretch
    (a single flush at the end made a large push wait for the whole set to reach the disk).
    """

    def __init__(self, tmp_dir: Path) -> None:
        make_private_dir(tmp_dir)
        self.path = tmp_dir / f"{secrets.token_hex(12)}.part"
        # 0600 whatever the umask; closed in finish/abort
        self._handle = os.fdopen(os.open(self.path, os.O_CREAT | os.O_EXCL | os.O_WRONLY,
                                         FILE_MODE), "wb")
        self._hash = hashlib.sha256()
        self.bytes = 0
        self._synced_at = 0
        self._sync: threading.Thread | None = None

    def write(self, data: bytes) -> None:
        """Append ``data`` to the part."""
        self._handle.write(data)
        self._hash.update(data)
        self.bytes += len(data)
        if self.bytes - self._synced_at >= SYNC_EVERY and not self._syncing():
            self._handle.flush()
            self._synced_at = self.bytes
            self._sync = threading.Thread(target=_datasync, args=(self._handle.fileno(),),
                                          name="whileai-part-sync", daemon=True)
            self._sync.start()

    def _syncing(self) -> bool:
        return self._sync is not None and self._sync.is_alive()

    def _wait(self) -> None:
        if self._sync is not None:
            self._sync.join()
            self._sync = None

    @property
    def sha256(self) -> str:
        """The hex digest of everything written so far."""
        return self._hash.hexdigest()

    def finish(self, parts_dir: Path, dataset_id: str) -> str:
        """Flush to disk and move the part under ``parts_dir``; return its relative path."""
        self._handle.flush()
        self._wait()
        os.fsync(self._handle.fileno())
        self._handle.close()
        relative = f"{dataset_id}/{secrets.token_hex(8)}.jsonl"
        target = parts_dir / relative
        make_private_dir(target.parent)
        os.replace(self.path, target)
        return relative

    def abort(self) -> None:
        """Close and delete the temp part (safe to call twice)."""
        self._wait()
        if not self._handle.closed:
            self._handle.close()
        self.path.unlink(missing_ok=True)


def _datasync(fd: int) -> None:
    """Flush a file's data to disk (a closed descriptor is no error: the upload ended)."""
    sync = getattr(os, "fdatasync", os.fsync)  # no fdatasync on macOS
    with contextlib.suppress(OSError):
        sync(fd)


def remove_parts(parts_dir: Path, relatives: Iterable[str]) -> None:
    """Delete part files (and their folder once empty)."""
    for relative in relatives:
        path = parts_dir / relative
        path.unlink(missing_ok=True)
        with contextlib.suppress(OSError):
            path.parent.rmdir()


def sweep(parts_dir: Path, tmp_dir: Path, referenced: set[str]) -> int:
    """Delete temp uploads and part files no manifest references; return how many went."""
    removed = 0
    if tmp_dir.is_dir():
        for path in tmp_dir.iterdir():
            path.unlink(missing_ok=True)
            removed += 1
    if parts_dir.is_dir():
        for folder in parts_dir.iterdir():
            for path in folder.iterdir():
                if f"{folder.name}/{path.name}" not in referenced:
                    path.unlink(missing_ok=True)
                    removed += 1
            with contextlib.suppress(OSError):
                folder.rmdir()
    return removed
