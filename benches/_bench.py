"""Shared helpers of the benches: seeded inputs, best-of timing, the CSV line, agreement checks.

Every bench prints ``name,size,python_s,rust_s,speedup,<peer>_ratio...,note`` where
``speedup = python_s / rust_s`` and ``<peer>_ratio = peer_s / rust_s`` (empty when the peer is
not installed). ``note`` says how the pure time was measured when it was not run in full (a
documented fraction of independent units, scaled linearly).
"""

from __future__ import annotations

import argparse
import importlib
import json
import random
import sys
import time
from collections.abc import Callable, Sequence
from types import ModuleType
from typing import Any

_VOCABULARY = (
    "order refund shipped account password reset invoice delivery address update cancel "
    "subscription plan upgrade charge card payment failed support ticket status tracking "
    "package warehouse return label customer agent policy please thanks the a to of and "
    "my your is was will can could not need help when where why how what today tomorrow "
    "kettle lid cracked blue replacement weekend friday monday store manager receipt box "
    "Zürich café naïve Привет заказ 注文 確認 Σίσυφος"
)
WORDS = tuple(_VOCABULARY.split())


def make_texts(n: int, seed: int = 0, lo: int = 10, hi: int = 60) -> list[str]:
    """``n`` seeded texts of ``lo``-``hi`` words, numbers and punctuation mixed in."""
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        words = []
        for _ in range(rng.randint(lo, hi)):
            r = rng.random()
            if r < 0.08:
                words.append(str(rng.randint(0, 99999)))
            elif r < 0.12:
                words.append(rng.choice(WORDS).capitalize() + rng.choice(",.?!"))
            else:
                words.append(rng.choice(WORDS))
        out.append(" ".join(words))
    return out


def best_of(fn: Callable[[], Any], repeats: int) -> tuple[float, Any]:
    """The fastest of ``repeats`` wall-clock timings of ``fn()``, and its last result."""
    best, out = float("inf"), None
    for _ in range(max(1, repeats)):
        start = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - start)
    return best, out


def yardstick_ms() -> float:
    """CPU milliseconds of a fixed pure-Python job (JSON in and out, dicts, a sort: the mix the
    platform server runs), best of three: how fast this machine is at the moment.

    The 2-core machine is a VM whose speed moves by 2-3x from one hour to the next with the
    code unchanged; a figure printed beside the yardstick of its moment can be compared
    with one from another moment.
    """
    text = json.dumps({"role": "user", "parts": [{"type": "text", "content": "where is W1"}],
                       "ids": list(range(16))})
    best = float("inf")
    for _ in range(3):
        start = time.process_time()
        for i in range(3000):
            doc = json.loads(text)
            doc["turn"] = i
            doc["ids"].sort(key=lambda n: -n)
            json.dumps(doc)
        best = min(best, time.process_time() - start)
    return best * 1000


def backends() -> tuple[ModuleType, ModuleType]:
    """The pure and the native kernel modules (exit when the native one is not built)."""
    pure = importlib.import_module("whileai._pure")
    try:
        native = importlib.import_module("whileai._native")
    except ImportError:
        sys.exit("whileai._native is not built: run `make build` first")
    return pure, native


def _plain(value: Any) -> Any:
    if isinstance(value, (tuple, list)):
        return [_plain(v) for v in value]
    if hasattr(value, "tolist"):
        return value.tolist()
    return value


def agree(a: Any, b: Any, what: str) -> None:
    """Stop the bench when the two backends' answers differ (``==``, floats included)."""
    if _plain(a) != _plain(b):
        sys.exit(f"backends disagree on {what}: the bench is void")


def parser(doc: str | None) -> argparse.ArgumentParser:
    """An argument parser with the flags every bench shares."""
    p = argparse.ArgumentParser(description=(doc or "").splitlines()[0])
    p.add_argument("--quick", action="store_true", help="smaller sizes (a smoke run)")
    p.add_argument("--repeats", type=int, default=3, help="repeats of the native and peer runs")
    return p


def header(peers: Sequence[str]) -> None:
    """Print the CSV header: the fixed columns, one ratio column per peer, and the note."""
    ratios = (p if p.endswith("_per_s") else f"{p}_ratio" for p in peers)
    cols = ["name", "size", "python_s", "rust_s", "speedup", *ratios]
    print(",".join([*cols, "note"]), flush=True)


def line(
    name: str,
    size: str | int,
    python_s: float | None,
    rust_s: float,
    peers: Sequence[float | None] = (),
    note: str = "",
) -> None:
    """Print one CSV line: times in seconds, ratios against the native time."""
    py = "" if python_s is None else f"{python_s:.4f}"
    speed = "" if python_s is None else f"{python_s / rust_s:.1f}"
    ratios = ["" if p is None else f"{p / rust_s:.2f}" for p in peers]
    print(",".join([name, str(size), py, f"{rust_s:.4f}", speed, *ratios, note]), flush=True)


def _status_mib(pid: int, field: str) -> float:
    from pathlib import Path

    try:
        lines = Path(f"/proc/{pid}/status").read_text().splitlines()
    except OSError:
        return float("nan")
    for line in lines:
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    return float("nan")


def peak_rss_of(pid: int) -> float:
    """VmHWM (peak resident memory) of a process, in MiB (Linux; NaN elsewhere)."""
    return _status_mib(pid, "VmHWM")


def rss_of(pid: int) -> float:
    """VmRSS (resident memory now) of a process, in MiB (Linux; NaN elsewhere)."""
    return _status_mib(pid, "VmRSS")


def cpu_seconds_of(pid: int) -> float:
    """User + system CPU seconds a process has used so far (Linux; NaN elsewhere)."""
    import os
    from pathlib import Path

    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return float("nan")
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
