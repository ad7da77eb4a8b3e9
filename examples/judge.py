"""Example judges for ``whileai grade --judge examples.judge:NAME`` (README walk-through).

A judge is any callable ``row -> {"reward": float, "reason": str}``. These two read only the
row, so they run offline.
"""

from __future__ import annotations

from typing import Any


def no_planted_mistake(row: dict[str, Any]) -> dict[str, Any]:
    """Pass a row the seeded agent did not plant a mistake in (its ``seeded`` list is empty)."""
    planted = row.get("seeded") or []
    return {"reward": 0.0 if planted else 1.0,
            "reason": f"planted: {', '.join(planted)}" if planted else "no planted mistake"}


def looked_it_up(row: dict[str, Any]) -> dict[str, Any]:
    """Pass a row whose agent called a tool before replying."""
    called = any(step.get("tool") for step in row.get("steps") or [])
    return {"reward": 1.0 if called else 0.0,
            "reason": "called a tool" if called else "answered without looking anything up"}
