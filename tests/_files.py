"""Input files the tests write: rows as JSONL, and raw lines for the readers' edge cases."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any


def write_jsonl(path: Path, rows: Iterable[dict[str, Any]]) -> Path:
    """Write one ``json.dumps`` line per row (UTF-8) and return ``path``."""
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def write_lines(path: Path, lines: Iterable[str], prefix: bytes = b"") -> Path:
    """Write ``prefix`` then the lines exactly as given (no newline added; lone surrogates kept
    as ``surrogatepass`` bytes, for the readers' tests) and return ``path``."""
    path.write_bytes(prefix + "".join(lines).encode("utf-8", "surrogatepass"))
    return path
