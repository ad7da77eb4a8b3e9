"""Deprecated presence markers (1 = the tic appears, higher is worse): use ``clean.style``.

``behavioral_markers``, ``mark_rows``, ``row_markers`` and ``STOCK_MARKERS`` read a paired
before/after delta backwards, because their polarity is presence; ``style_markers`` and
``style_report`` measure the same behaviours with 1.0 = clean. Each call warns
(``DeprecationWarning``).

>>> import warnings
>>> with warnings.catch_warnings():
...     warnings.simplefilter("ignore")
...     behavioral_markers([{"final_text": "I'm so sorry, I think so."}])["apology"]
1.0
"""

from __future__ import annotations

import re
import warnings
from typing import Any

from whileai.rows.source import as_rows
from whileai.simulations.clean.style import TICS

__all__ = ["STOCK_MARKERS", "behavioral_markers", "mark_rows", "row_markers"]

STOCK_MARKERS = ("boilerplate", "refusal", "hedging", "apology", "sycophancy")
_REFUSAL = re.compile(r"\bI\s+(?:can't|cannot|won't|am\s+unable\s+to)\s+(?:help|assist|do)\b|"
                      r"\boutside\s+what\s+I\s+can\s+help", re.IGNORECASE)


def _warn(name: str) -> None:
    warnings.warn(
        f"{name} is deprecated (presence polarity: 1 = the tic appears); use style_markers / "
        "style_report, whose markers are 1.0 when the reply is clean",
        DeprecationWarning,
        stacklevel=3,
    )


def _presence(row: dict[str, Any]) -> dict[str, float]:
    text = row.get("final_text") if isinstance(row.get("final_text"), str) else ""
    out = {name: 1.0 if TICS[name].search(text or "") else 0.0 for name in TICS}
    out["refusal"] = 1.0 if _REFUSAL.search(text or "") else 0.0
    return {name: out[name] for name in STOCK_MARKERS}


def row_markers(row: dict[str, Any]) -> dict[str, float]:
    """Deprecated: presence of each stock tic in one row's reply."""
    _warn("row_markers")
    return _presence(row)


def mark_rows(rows: Any) -> list[dict[str, Any]]:
    """Deprecated: copies of the rows with presence markers stamped (``marker 1 = tic``)."""
    _warn("mark_rows")
    return [{**r, "markers": {**(r.get("markers") or {}), **_presence(r)}} for r in as_rows(rows)]


def behavioral_markers(rows: Any) -> dict[str, float]:
    """Deprecated: the share of rows showing each stock tic."""
    _warn("behavioral_markers")
    items = as_rows(rows)
    if not items:
        return dict.fromkeys(STOCK_MARKERS, 0.0)
    marks = [_presence(r) for r in items]
    return {name: round(sum(m[name] for m in marks) / len(items), 4) for name in STOCK_MARKERS}
