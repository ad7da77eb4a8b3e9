"""One self-overwriting progress line on stderr for long work (simulate, grade, large scans).

Drawn only when the stream is a terminal, at most five times a second; ``enabled=False`` (the
callers' ``progress=False``) silences it. No dependency.

>>> import io
>>> line = Progress("grade", 10, enabled=True, stream=io.StringIO())  # not a TTY: stays silent
>>> line.update(5); line.finish(10)
"""

from __future__ import annotations

import sys
import time
from typing import TextIO

__all__ = ["Progress"]


class Progress:
    """``label: done/target rows  rate/s  ETA`` redrawn in place; ended by ``finish``."""

    def __init__(
        self,
        label: str,
        target: int,
        *,
        enabled: bool,
        stream: TextIO | None = None,
        min_target: int = 0,
    ) -> None:
        self.stream = stream or sys.stderr
        # Short jobs finish before a line would help; below min_target nothing is drawn.
        self.enabled = enabled and target >= min_target and self.stream.isatty()
        self.label = label
        self.target = target
        self.start = time.monotonic()
        self.last = 0.0

    def update(self, done: int, *, force: bool = False) -> None:
        """Redraw the line (at most five times a second unless ``force``)."""
        if not self.enabled:
            return
        now = time.monotonic()
        if not force and now - self.last < 0.2:
            return
        self.last = now
        rate = done / max(now - self.start, 1e-9)
        eta = f"{(self.target - done) / rate:.0f}s" if rate > 0 else "?"
        self.stream.write(f"\r{self.label}: {done}/{self.target} rows  {rate:.1f}/s  ETA {eta} ")
        self.stream.flush()

    def finish(self, done: int) -> None:
        """Draw the final state and end the line."""
        if self.enabled:
            self.update(done, force=True)
            self.stream.write("\n")
            self.stream.flush()
