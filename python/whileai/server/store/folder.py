"""The server folder is private: made 0700, its files 0600 whatever the umask, and a folder or
database other users can read is refused (it holds the key that signs delegated credentials).

>>> mode_problem(Path("/srv/w"), 0o40755)
'/srv/w is readable by other users (mode 755)'
>>> mode_problem(Path("/srv/w"), 0o40700) is None
True
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from whileai.errors import ConfigError

__all__ = ["FILE_MODE", "FOLDER_MODE", "ServerFolderError", "make_private_dir", "mode_problem",
           "prepare", "private_file"]

FOLDER_MODE = 0o700
FILE_MODE = 0o600
_CHECKED = ("whileai.db", "whileai.db-wal", "whileai.db-shm", "parts", "tmp")


class ServerFolderError(ConfigError):
    """The server folder (or a file in it) is open to other users of the machine."""


def mode_problem(path: Path, mode: int) -> str | None:
    """What is wrong with ``path`` of ``mode`` (group or others may read, write or enter it)."""
    if stat.S_IMODE(mode) & 0o077:
        return f"{path} is readable by other users (mode {stat.S_IMODE(mode):o})"
    return None


def make_private_dir(path: Path) -> None:
    """``mkdir -p`` where every folder made is 0700 (an existing one is left as it is)."""
    missing = []
    for parent in (path, *path.parents):
        if parent.exists():
            break
        missing.append(parent)
    for folder in reversed(missing):
        folder.mkdir(mode=FOLDER_MODE, exist_ok=True)
        os.chmod(folder, FOLDER_MODE)  # mkdir's mode passes through the umask


def private_file(path: Path) -> None:
    """Create ``path`` empty with mode 0600 unless it exists."""
    try:
        fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, FILE_MODE)
    except FileExistsError:
        return
    os.close(fd)


def prepare(directory: Path, *, sqlite: bool) -> None:
    """Make the server folder private, or refuse one that is not.

    A new folder (and its database file, for SQLite) is created 0700/0600; SQLite gives its
    WAL and SHM files the database file's mode. An existing folder, database, log or
    ``parts/``/``tmp/`` that group or others can read is refused.

    Raises:
        ServerFolderError: naming each open path and the command that closes it.
    """
    make_private_dir(directory)
    if sqlite:
        private_file(directory / "whileai.db")
    problems = [mode_problem(directory, directory.stat().st_mode)]
    for name in _CHECKED:
        path = directory / name
        if path.exists():
            problems.append(mode_problem(path, path.stat().st_mode))
    found = [p for p in problems if p is not None]
    if found:
        raise ServerFolderError(
            f"the server folder must be private to its owner: {'; '.join(found)}. It holds "
            "the key that signs credentials and every account's data. Fix it with: chmod -R "
            f"go= {directory}   (then start the server again)")
