"""Every Python the tests start loads this (tests/kernel_reach.py puts this folder on
PYTHONPATH): with ``WHILEAI_KERNEL_LOG`` set, each read of a backend-dependent name of
``whileai._backend`` in this process appends ``pid name`` to that file, once per name between
two lines the test process writes (it writes one as each test starts)."""

from __future__ import annotations

import contextlib
import os

_LOG = os.environ.get("WHILEAI_KERNEL_LOG")
_fd = -1
if _LOG:
    # FileNotFoundError: a helper (a Ray worker) starting after the session ended
    with contextlib.suppress(FileNotFoundError):
        _fd = os.open(_LOG, os.O_WRONLY | os.O_APPEND)

if _fd >= 0:
    import kernel_watch

    _logged: set[str] = set()
    _end = [-1]  # the log's size after this process's last line

    def _log(name: str) -> None:
        if os.fstat(_fd).st_size != _end[0]:  # a new test has started since: log afresh
            _logged.clear()
        if name not in _logged:
            _logged.add(name)
            os.write(_fd, f"{os.getpid()} {name}\n".encode())
            _end[0] = os.fstat(_fd).st_size

    kernel_watch.install(_log)
