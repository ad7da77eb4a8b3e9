"""Progress on stderr for every long job (simulate, grade, decontaminate, scan, export, push, pull),
and a summary line when it ends.

Where it goes, by where stderr points:

- a terminal: one line redrawn in place at most five times a second: ``label: done/target unit
  rate ETA`` plus the job's own counts (``dropped 12``); the summary replaces it at the end;
- anything else (a pipe, a log file, a notebook): a plain line every ``interval`` seconds (5 by
  default) at most, and the summary only for a job that ran that long, so short jobs print
  nothing;
- ``enabled=False`` (a call's ``progress=False``, the command line's ``--quiet``): nothing.

It never writes to stdout, so ``--json`` output stays clean. No dependency; drawing is guarded
by a lock, so worker threads may report.

Three ways to use it, all with the same line:

- ``with Progress("push", total, unit="bytes", enabled=progress) as line: line.advance(n)``;
  leaving the block prints the summary (or just ends the line when an exception escapes);
- ``for shard in track(shards, "ray", unit="shards", enabled=progress): ...`` wraps an iterable;
- ``line.stage("matrix")`` names a step whose own progress cannot be counted (a kernel call).

The convention for a public call (the Ray adapters, say): a keyword-only ``progress: bool =
True`` passed on as ``enabled=progress``; calls it makes inside pass ``progress=False`` (or its
own ``progress``), so that ``progress=False`` silences everything. A count named ``bytes`` is
shown as a size (``bytes 3.4 MB``).

>>> import io
>>> with Progress("export", 3, enabled=True, stream=io.StringIO()) as line:  # not a TTY, short
...     line.advance(3)
>>> line.done, line.drawn
(3, False)
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Iterable, Iterator, Sized
from typing import Any, TextIO, TypeVar

__all__ = ["Progress", "format_bytes", "format_seconds", "track"]

T = TypeVar("T")
TTY_INTERVAL = 0.2
LOG_INTERVAL = 5.0


def format_seconds(seconds: float) -> str:
    """A short duration: ``0.4s``, ``42s``, ``3m05s``, ``2h07m``.

    >>> [format_seconds(s) for s in (0.42, 42.4, 185, 7620)]
    ['0.4s', '42s', '3m05s', '2h07m']
    """
    if seconds < 10:
        return f"{seconds:.1f}s"
    if seconds < 60:
        return f"{seconds:.0f}s"
    whole = round(seconds)
    if whole < 3600:
        return f"{whole // 60}m{whole % 60:02d}s"
    return f"{whole // 3600}h{whole % 3600 // 60:02d}m"


def format_bytes(count: float) -> str:
    """A byte count in B, kB, MB or GB (powers of 1000).

    >>> [format_bytes(n) for n in (512, 2_500, 3_400_000, 7e9)]
    ['512 B', '2.5 kB', '3.4 MB', '7.0 GB']
    """
    for unit, size in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if count >= size:
            return f"{count / size:.1f} {unit}"
    return f"{count:.0f} B"


def _amount(count: float, unit: str) -> str:
    return format_bytes(count) if unit == "bytes" else f"{count:,.0f}"


def _rate(per_second: float, unit: str) -> str:
    if unit == "bytes":
        return f"{format_bytes(per_second)}/s"
    return f"{per_second:,.0f} {unit}/s" if per_second >= 100 else f"{per_second:.1f} {unit}/s"


def _count(key: str, value: int) -> str:
    return f"{key} {format_bytes(value) if key == 'bytes' else f'{value:,}'}"


class Progress:
    """One job's progress line; see the module docstring for where it is drawn.

    Args:
        label: what the job is (``decontaminate``), the start of every line.
        target: how many units the job will do, or None when unknown (no ETA then).
        enabled: False draws nothing at all (``progress=False``, ``--quiet``).
        stream: where to draw (default ``sys.stderr`` at construction).
        min_target: below this target nothing is drawn (too short to be worth a line).
        unit: what is counted: ``rows``, ``bytes`` (shown as kB/MB/GB), ``shards``...
        interval: seconds between lines (default 0.2 on a terminal, 5 elsewhere).
    """

    def __init__(
        self,
        label: str,
        target: int | None = None,
        *,
        enabled: bool,
        stream: TextIO | None = None,
        min_target: int = 0,
        unit: str = "rows",
        interval: float | None = None,
    ) -> None:
        self.stream = stream or sys.stderr
        try:
            self.tty = bool(self.stream.isatty())
        except (AttributeError, ValueError):  # a closed or file-like stream without isatty
            self.tty = False
        # Short jobs finish before a line would help; below min_target nothing is drawn.
        self.enabled = bool(enabled) and (target is None or target >= min_target)
        self.interval = (TTY_INTERVAL if self.tty else LOG_INTERVAL) if interval is None \
            else interval
        self.label = label
        self.target = target
        self.unit = unit
        self.done = 0
        self.share = 0.0  # set by estimate(): the target is then guessed from done / share
        self.counts: dict[str, int] = {}
        self.step: str | None = None
        self.start = self.step_start = self.last = time.monotonic()
        if self.tty:
            self.last -= self.interval  # a terminal shows the first update at once
        self._next_check = 0  # advance() reads the clock once done reaches this
        self.drawn = False
        self.closed = False
        self._width = 0
        self._lock = threading.Lock()

    def update(self, done: int, *, force: bool = False, **counts: int) -> None:
        """Set how much is done (and the job's own counts, e.g. ``dropped=12``); maybe redraw."""
        self.done = done
        if counts:
            self.counts.update(counts)
        if self.enabled and (force or time.monotonic() - self.last >= self.interval):
            self._draw(self.render())

    def advance(self, amount: int = 1, **counts: int) -> None:
        """Add ``amount`` to what is done (and to each named count); maybe redraw.

        Cheap enough to call once per row: the clock is read only every so many units (about
        every 20 ms at the rate so far).
        """
        self.done += amount
        if counts:
            for key, value in counts.items():
                self.counts[key] = self.counts.get(key, 0) + value
        if self.enabled and self.done >= self._next_check:
            now = time.monotonic()
            rate = self.done / max(now - self.step_start, 1e-9)
            self._next_check = self.done + max(1, int(rate * min(0.02, self.interval)))
            if now - self.last >= self.interval:
                self._draw(self.render())

    def estimate(self, share: float) -> None:
        """Say what share of its input the job has used (bytes of a file read, say).

        For a job that knows how far through its input it is but not how many units it holds:
        the target is then guessed from what is done and shown as ``~N``.
        """
        if 0.0 < share <= 1.0:
            self.share = share

    def counted(self, items: Iterable[T]) -> Iterator[T]:
        """Yield ``items`` unchanged, advancing by one after each (target: their length)."""
        if isinstance(items, Sized):
            self.target = len(items)
        if not self.enabled:  # nothing to draw: count without touching each item
            before = self.done
            for self.done, item in enumerate(items, start=before + 1):
                yield item
            return
        for item in items:
            yield item
            self.done += 1
            if self.done >= self._next_check:
                self.advance(0)

    def stage(self, name: str, target: int | None = None, *, unit: str | None = None) -> None:
        """Start a named step with its own count (``done`` starts again at 0); redraw."""
        self.step, self.target, self.done, self.share = name, target, 0, 0.0
        self._next_check = 0
        self.unit = unit or self.unit
        self.step_start = time.monotonic()
        if self.enabled and (self.tty or self.step_start - self.last >= self.interval):
            self._draw(self.render())

    def render(self) -> str:
        """The current line (without the carriage return)."""
        now = time.monotonic()
        head = f"{self.label} [{self.step}]" if self.step else self.label
        elapsed = now - self.step_start
        if self.step and not self.done:
            parts = [f"{head}: {format_seconds(elapsed)}"]
        else:
            if self.share and self.done:
                self.target = max(round(self.done / self.share), self.done)
            amount = _amount(self.done, self.unit)
            if self.target is not None:
                amount += f"/{'~' if self.share else ''}{_amount(self.target, self.unit)}"
            amount += "" if self.unit == "bytes" else f" {self.unit}"
            rate = self.done / max(elapsed, 1e-9)
            parts = [f"{head}: {amount}", _rate(rate, self.unit)]
            if self.target is not None and rate > 0:
                parts.append(f"ETA {format_seconds(max(self.target - self.done, 0) / rate)}")
            else:
                parts.append(format_seconds(elapsed))
        parts.extend(_count(key, value) for key, value in self.counts.items())
        return "  ".join(parts)

    def summary(self) -> str:
        """The closing line: what was done, in how long, at what rate, and the counts."""
        elapsed = time.monotonic() - self.start
        amount = _amount(self.done, self.unit) + ("" if self.unit == "bytes" else f" {self.unit}")
        text = (f"{self.label}: {amount} in {format_seconds(elapsed)} "
                f"({_rate(self.done / max(elapsed, 1e-9), self.unit)})")
        return "  ".join([text, *(_count(key, value) for key, value in self.counts.items())])

    def finish(self, done: int | None = None, **counts: int) -> None:
        """Print the summary and end the line (once; later calls do nothing)."""
        if done is not None:
            self.done = done
        self.counts.update(counts)
        if self.closed:
            return
        self.closed = True
        long_enough = time.monotonic() - self.start >= self.interval
        if self.enabled and (self.tty or self.drawn or long_enough):
            self._draw(self.summary(), end=True)

    def close(self) -> None:
        """End a half-drawn terminal line without a summary (the job failed or was stopped)."""
        if self.closed:
            return
        self.closed = True
        if self.enabled and self.tty and self.drawn:
            with self._lock:
                self.stream.write("\n")
                self.stream.flush()

    def _draw(self, text: str, *, end: bool = False) -> None:
        with self._lock:
            if self.closed and not end:
                return
            self.last = time.monotonic()
            self.drawn = True
            if self.tty:  # overwrite the previous line, padding over what was longer
                pad = " " * max(self._width - len(text), 0)
                self._width = len(text)
                self.stream.write(f"\r{text}{pad}" + ("\n" if end else ""))
            else:
                self.stream.write(text + "\n")
            self.stream.flush()

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, kind: Any, value: Any, traceback: Any) -> None:
        if kind is None:
            self.finish()
        else:
            self.close()


def track(
    items: Iterable[T],
    label: str,
    *,
    total: int | None = None,
    unit: str = "rows",
    enabled: bool = True,
    stream: TextIO | None = None,
) -> Iterator[T]:
    """Yield ``items`` unchanged, counting each one on a :class:`Progress` line.

    The summary is printed when the iteration ends; ``total`` defaults to ``len(items)`` when
    ``items`` has one. Meant for jobs made of independent pieces (shards, files, batches).

    >>> import io
    >>> sum(track(range(4), "shards", unit="shards", stream=io.StringIO()))
    6
    """
    if total is None and isinstance(items, Sized):
        total = len(items)
    with Progress(label, total, enabled=enabled, stream=stream, unit=unit) as line:
        for item in items:
            yield item
            line.advance()
