"""The cuts report in words: the three lines the client prints and the traces page leads with.

The report comes from the server (``server.services.cuts``); its text is shared by the client
(``whileai.platform.format_cuts``) and the server's pages, so it lives below both, with no
dependency.

>>> print(format_cuts({"prompts": 5, "runs": 5, "scored": 0}))
no prompt is worth training on yet
5 prompts seen · 0 scored runs · 0 need more runs
next: zps.send_score(trace_id, 1.0) for each finished run
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["format_cuts"]


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def format_cuts(report: Mapping[str, Any], agent: str | None = None) -> str:
    """The three lines the traces page leads with: the answer, its counts, what to run next."""
    rl, more = report.get("rl") or {}, (report.get("more") or {}).get("prompts", 0)
    who = f'agent="{agent}", ' if agent else ""
    if rl.get("prompts"):
        held = rl.get("holdout", 0)
        verb = "is" if rl["prompts"] == 1 else "are"
        return "\n".join([
            f"{_plural(rl['prompts'], 'prompt')} {verb} worth training on",
            f"{_plural(rl.get('runs', 0), 'run')} · {rl.get('train', 0)} train · "
            + (f"{held} held out" if held else "none held out"),
            f'next: zps.cut({who}kind="rl")',
        ])
    seen, scored = report.get("prompts", 0), report.get("scored", 0)
    nxt = ("next: zps.send_score(trace_id, 1.0) for each finished run" if not scored
           else f"next: run the {_plural(more, 'prompt')} that need more runs again"
           if more else f'next: zps.cut({who}kind="sft")')
    return "\n".join([
        "no prompt is worth training on yet",
        f"{_plural(seen, 'prompt')} seen · {scored} scored runs · {more} need more runs",
        nxt,
    ])
