"""``whileai info`` and ``whileai demo``."""

from __future__ import annotations

import argparse
from typing import Any

from whileai import _backend
from whileai._version import __version__
from whileai.config import home


def register(sub: Any) -> None:
    """Add the core subcommands to the CLI."""
    info = sub.add_parser("info", help="version, kernel backend and home folder")
    info.set_defaults(func=run_info)
    demo = sub.add_parser("demo", help="run the offline quick start end to end")
    demo.set_defaults(func=run_demo)


def run_info(args: argparse.Namespace) -> int:
    """Print the version, which backend serves each kernel, and the home folder."""
    print(f"whileai {__version__}")
    print(f"backend: {_backend.BACKEND}")
    if _backend.NATIVE_ERROR:
        print(f"  (native not used: {_backend.NATIVE_ERROR})")
    for kernel, names in _backend.KERNELS.items():
        served = ", ".join(f"{n}={_backend.KERNEL_BACKENDS[n]}" for n in names)
        print(f"kernel {kernel}: {served}")
    print(f"home: {home()}")
    return 0


def run_demo(args: argparse.Namespace) -> int:
    """Embed a few asks and print each one's nearest neighbour (filled in by later issues)."""
    texts = [
        "Where is my order 4412? It was due yesterday.",
        "My package 4412 still has not arrived, can you check?",
        "I want a refund for the blender I returned last week.",
        "Please cancel my subscription before the next charge.",
        "The refund for my returned blender never showed up.",
        "Stop my plan from renewing, I do not want another charge.",
    ]
    dim = 256
    counts = _backend.embed_counts(texts, dim)
    rows = [counts[i * dim : (i + 1) * dim] for i in range(len(texts))]
    for i, row in enumerate(rows):
        best = max(
            (j for j in range(len(rows)) if j != i),
            key=lambda j: sum(a * b for a, b in zip(row, rows[j])),
        )
        print(f"{texts[i]!r}\n  nearest: {texts[best]!r}")
    return 0
