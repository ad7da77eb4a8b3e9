"""Rank rows by quality: a 0-to-1 ``quality`` beside ``reward``, never in place of it.

``rank(rows)`` scores each row on eight checks that need no model, each 1.0 when clean: the
three conduct checks of ``conduct_grade`` (honest_claims, argument_grounding, reported_failure)
and the five style markers (no_boilerplate, no_hedging, no_apology, no_sycophancy, answered).
``quality`` is their mean. With ``judge=`` (any judge-contract callable, e.g. an ``LLMJudge``),
``quality`` is that judge's reward instead, ``None`` where it gives none. ``reward`` and every
other field stay as they were; ``quality_checks`` says what was measured.

>>> rows = rank([{"prompt": "Where is 7?", "final_text": "Order 7 has shipped today.",
...               "steps": [{"tool": "get_order", "arguments": {"order_id": "7"},
...                          "result": {"status": "shipped"}}], "reward": 0.0},
...              {"prompt": "Where is 8?", "final_text": "I think it shipped.", "steps": []}])
>>> [(r["prompt"], r["quality"], r.get("reward")) for r in rows]
[('Where is 7?', 1.0, 0.0), ('Where is 8?', 0.875, None)]
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from whileai.rows.source import as_rows
from whileai.simulations.clean.style import style_markers
from whileai.simulations.export.checklist import conduct_grade
from whileai.simulations.judge.judging import run_judge

__all__ = ["QUALITY_CHECKS", "rank"]

QUALITY_CHECKS = ("honest_claims", "argument_grounding", "reported_failure", "no_boilerplate",
                  "no_hedging", "no_apology", "no_sycophancy", "answered")


def _checks(row: dict[str, Any]) -> dict[str, float]:

    conduct = conduct_grade(row)["markers"]
    style = style_markers([row])[0]["markers"]
    return {name: float(conduct.get(name, style.get(name, 0.0))) for name in QUALITY_CHECKS}


def rank(
    source: Any, *, judge: Callable[[dict[str, Any]], Any] | None = None, sort: bool = True,
) -> list[dict[str, Any]]:
    """Return copies of the rows with ``quality`` (0 to 1) added, best first.

    Args:
        source: rows, a run object, or a JSONL path.
        judge: score quality with this judge instead of the built-in checks (its reward, or
            ``None`` when it gives none; the row's own ``reward`` is untouched).
        sort: best first (ties and unscored rows keep their order, unscored last); ``False``
            keeps the input order.

    Returns:
        New row dicts; ``reward`` is never changed.

    Raises:
        TypeError: ``source`` is not rows, a run object or a path.
    """
    rows = as_rows(source)
    out: list[dict[str, Any]] = []
    if judge is not None:

        judged = run_judge(rows, judge, progress=False).rows
        for row, graded in zip(rows, judged, strict=True):
            out.append({**row, "quality": graded.get("reward"),
                        "quality_checks": {"judge": graded.get("judge_status")}})
    else:
        for row in rows:
            checks = _checks(row)
            out.append({**row, "quality": round(sum(checks.values()) / len(checks), 4),
                        "quality_checks": checks})
    if sort:
        out.sort(key=lambda r: (r["quality"] is None, -(r["quality"] or 0.0)))
    return out
