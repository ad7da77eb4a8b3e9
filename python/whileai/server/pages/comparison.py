"""Two datasets side by side: pass@1 with its paired interval, per-category deltas, the tasks
that flipped, and one task's conversations from both.

The numbers are the library's: ``delta_report`` (``compare_runs`` per metric and per group of
``by``) over the two row sets; ``flips`` lists the shared tasks whose pass rate crossed one
half. Served as ``/compare?a=ID&b=ID`` on the server and under ``whileai view A --compare B``
(``a=local&b=compare``).

>>> flips({"t1": 1.0, "t2": 0.0, "t3": 1.0}, {"t1": 0.25, "t2": 0.0, "t3": 1.0})
[{'task': 't1', 'a': 1.0, 'b': 0.25, 'direction': 'down'}]
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import Response

from whileai.server.pages.conversation import transcript
from whileai.server.pages.render import render
from whileai.server.pages.rowindex import RowIndex
from whileai.server.pages.rows import Site, missing, open_site

__all__ = ["flips", "pass_rates", "router"]

router = APIRouter(include_in_schema=False)
_BY = ("", "intent", "stance", "persona", "condition", "tool", "state")
_RESAMPLES = 2000


def pass_rates(index: RowIndex) -> dict[str, float]:
    """Each task's share of judged rollouts that pass (tasks with none judged left out)."""
    totals: dict[str, list[int]] = {}
    for summary in index.summaries:
        if summary.reward is not None:
            seen = totals.setdefault(summary.task, [0, 0])
            seen[0] += summary.reward >= 0.5
            seen[1] += 1
    return {task: passed / n for task, (passed, n) in totals.items()}


def flips(a: dict[str, float], b: dict[str, float]) -> list[dict[str, Any]]:
    """The shared tasks whose pass rate crossed one half between ``a`` and ``b``."""
    return [{"task": task, "a": a[task], "b": b[task],
             "direction": "up" if b[task] >= 0.5 else "down"}
            for task in a if task in b and (a[task] >= 0.5) != (b[task] >= 0.5)]


def _pair(request: Request) -> tuple[Site, Site] | Response:
    viewers = getattr(request.app.state, "viewers", None)
    a_id = request.query_params.get("a") or ("local" if viewers else "")
    b_id = request.query_params.get("b") or ("compare" if viewers else "")
    if viewers is not None and b_id not in viewers:
        return missing("start the viewer with a second file to compare: "
                       "whileai view A.jsonl --compare B.jsonl", "local")
    if not a_id or not b_id:
        return missing("name the two datasets to compare: /compare?a=ID&b=ID", None)
    a, b = open_site(request, a_id), open_site(request, b_id)
    if not isinstance(a, Site):
        return a
    if not isinstance(b, Site):
        return b
    return a, b


def _on_pair(request: Request, page: Callable[[Request, Site, Site], Response]) -> Response:
    """``page`` over the two sites the request names, or the page saying why there are not two."""
    pair = _pair(request)
    return page(request, *pair) if isinstance(pair, tuple) else pair


@router.get("/compare")
def compare_page(request: Request) -> Response:
    """pass@1 and markers before and after, per-category deltas, and the flipped tasks."""
    return _on_pair(request, _compare)


def _compare(request: Request, a: Site, b: Site) -> Response:
    from whileai.simulations.measure.delta import delta_report

    by = request.query_params.get("by", "")
    by = by if by in _BY else ""
    rows_a = [a.index.row(i) for i in range(len(a.index))]
    rows_b = [b.index.row(i) for i in range(len(b.index))]
    report = delta_report(rows_a, rows_b, by=by or None, n_resamples=_RESAMPLES)
    flipped = flips(pass_rates(a.index), pass_rates(b.index))
    metrics = [[name, m["before"], m["after"], m["delta"], m["ci95"], m["p_value"],
                m["direction"]] for name, m in report["metrics"].items()]
    groups = [[g, m["before"], m["after"], m["delta"], m["ci95"], m["direction"]]
              for g, m in report["groups"].items()]
    notes = [m["note"] for m in report["metrics"].values() if m.get("note")]
    return render("compare.html", title=f"Compare · {a.name} · {b.name}", a=a, b=b,
                  report=report, metrics=metrics, groups=groups, flipped=flipped, by=by,
                  choices=_BY, notes=notes, local=a.local, signed_in=a.local is None)


@router.get("/compare/task")
def compare_task(request: Request) -> Response:
    """One task's conversations from both datasets, side by side."""
    return _on_pair(request, _side_by_side)


def _side_by_side(request: Request, a: Site, b: Site) -> Response:
    task = request.query_params.get("task", "")
    sides = []
    for site in (a, b):
        positions = site.index.by_task.get(task, ())
        sides.append({"site": site, "rows": [
            {"position": p,
             "view": transcript(site.index.row(p, keep_privileged=site.show_privileged),
                                show_privileged=site.show_privileged)}
            for p in positions[:4]], "more": max(0, len(positions) - 4)})
    if not sides[0]["rows"] and not sides[1]["rows"]:
        return missing(f"neither dataset has task {task!r}", a.local)
    return render("compare_task.html", title=f"Task side by side · {a.name} · {b.name}",
                  a=a, b=b, task=task, sides=sides, local=a.local, signed_in=a.local is None)
