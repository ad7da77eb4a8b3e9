"""The pages: datasets, a dataset, traces, runs, a run, and the public catalog.

Each page reads through the same services as the API and fills a template
(``templates/*.html``, autoescaped); charts are server-made SVG (``simulations.report.svg``),
each with its numbers in a table beside it.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import RedirectResponse, Response
from markupsafe import Markup

from whileai.server.pages.layout import PAGE_SIZE, link, page_no
from whileai.server.pages.render import render, when
from whileai.server.pages.session import page_account
from whileai.server.routes.deps import StoreDep
from whileai.server.services import browse, cuts, datasets, gate, profile, runs, trace_reads
from whileai.server.services.problems import ServiceError
from whileai.simulations.report.svg import histogram, line_chart

__all__ = ["router"]

router = APIRouter(include_in_schema=False)
_PURPOSES = ("train", "holdout", "eval", "raw")
_SERIES = ("reward", "kl", "loss", "completion_length")


def _signin() -> Response:
    return RedirectResponse("/signin", status_code=303)


def not_found(message: str, **values: Any) -> Response:
    """The not-found page with the service's message."""
    return render("notfound.html", 404, title="Not found", message=message, **values)


@router.get("/datasets")
def datasets_page(request: Request, store: StoreDep) -> Response:
    """Datasets by purpose, newest first, with lineage and cached profile numbers."""
    account = page_account(store, request)
    if account is None:
        return _signin()
    number = page_no(request)
    found = browse.dataset_page(store, account, limit=PAGE_SIZE, offset=number * PAGE_SIZE)
    sections = []
    for purpose in _PURPOSES:
        items = [d for d in found["datasets"] if d["purpose"] == purpose]
        if items:
            sections.append({"purpose": purpose, "count": found["by_purpose"].get(purpose, 0),
                             "rows": [_dataset_cells(d) for d in items]})
    return render("datasets.html", title="Datasets", total=found["total"], sections=sections,
                  page_no=number, size=PAGE_SIZE)


def _dataset_cells(d: dict[str, Any]) -> list[Any]:
    prof = d["profile"] or {}
    return [link(f"/datasets/{d['datasetId']}", d["name"]), d["rows"], d["mode"], d["agent"],
            prof.get("pass_rate"), prof.get("gradient_support"), d["parentId"] or "",
            when(d["createdAt"]), link(f"/datasets/{d['datasetId']}/rows", "rows")]


@router.get("/datasets/{dataset_id}")
def dataset_page(dataset_id: str, request: Request, store: StoreDep) -> Response:
    """One dataset: profile, per-task pass rates, its gate report, lineage, a link to its rows."""
    account = page_account(store, request)
    if account is None:
        return _signin()
    try:
        info = datasets.get(store, account, dataset_id)
    except ServiceError as exc:
        return not_found(exc.message)
    prof = profile.profile(store, account, dataset_id, force=False)
    family = browse.lineage(store, account, dataset_id)
    rates = prof.get("per_task_pass_rate") or {}
    numbers = [["rows", prof.get("rows")], ["graded", prof.get("graded")],
               ["pass rate", prof.get("pass_rate")], ["tasks", prof.get("tasks")],
               ["tasks with a pass and a fail", prof.get("mixed_tasks")],
               ["gradient support", prof.get("gradient_support")],
               ["tool calls", (prof.get("tool_use") or {}).get("tool_calls")]]
    verdict = gate.gate_facts(store, account, dataset_id, version=prof.get("version"),
                              mode=info.get("mode"))
    return render("dataset.html", title=info["name"], info=info, dataset_id=dataset_id,
                  numbers=numbers, gate=verdict,
                  chart=Markup(histogram(list(rates.values()), title="pass rate per task")),
                  rates=[[k, v] for k, v in list(rates.items())[:50]],
                  parents=family["parents"], children=family["children"])


@router.get("/traces")
def traces_page(request: Request, store: StoreDep) -> Response:
    """The cuts sentence first, then the runs table by agent with their scores."""
    account = page_account(store, request)
    if account is None:
        return _signin()
    agent = request.query_params.get("agent") or None
    number = page_no(request)
    report = cuts.cuts_report(store, account, agent=agent)
    found = trace_reads.list_traces(store, account, agent=agent, limit=PAGE_SIZE,
                               offset=number * PAGE_SIZE)
    rows = [[link(f"/traces/{t['traceId']}", t["traceId"]), t["agent"],
             t["prompt"] and t["prompt"][:80], t["spans"],
             ", ".join(f"{k}={v:g}" for k, v in sorted(t["scores"].items())) or "unscored",
             when(t["createdAt"])] for t in found["traces"]]
    return render("traces.html", title="Traces", lines=cuts.summary_lines(report, agent),
                  found=found, rows=rows, page_no=number, size=PAGE_SIZE)


@router.get("/runs")
def runs_page(request: Request, store: StoreDep) -> Response:
    """Training runs, newest first."""
    account = page_account(store, request)
    if account is None:
        return _signin()
    number = page_no(request)
    found = runs.list_runs(store, account, limit=PAGE_SIZE, offset=number * PAGE_SIZE)
    rows = [[link(f"/runs/{r['runId']}", r["name"]), r["status"], r["points"], r["last_step"],
             r["total_steps"], (r["holdout_result"] or {}).get("verdict"), when(r["created"])]
            for r in found["runs"]]
    return render("runs.html", title="Runs", total=found["total"], rows=rows, page_no=number,
                  size=PAGE_SIZE)


def _series(points: list[dict[str, Any]], name: str) -> list[tuple[float, float]]:
    keys = [name, f"train/{name}", f"monitor/{name}", f"objective/{name}"]
    out = []
    for p in points:
        value = next((p[k] for k in keys if isinstance(p.get(k), (int, float))), None)
        if value is not None:
            out.append((float(p["step"]), float(value)))
    return out


@router.get("/runs/{run_id}")
def run_page(run_id: str, request: Request, store: StoreDep) -> Response:
    """A run: the holdout verdict, reward / KL / loss / length over steps with monitor events
    marked, the delta table, notes and alarms."""
    account = page_account(store, request)
    if account is None:
        return _signin()
    try:
        run = runs.get_run(store, account, run_id)
    except ServiceError as exc:
        return not_found(exc.message)
    events = run["events"]
    markers = [(float(e["step"]), f"{e.get('name')}: {e.get('message')}") for e in events
               if e["kind"] == "alarm" and e.get("step") is not None]
    charts = []
    for name in _SERIES:
        points = _series(run["series"], name)
        if points:
            svg = line_chart({name: points}, title=f"{name} over steps", markers=markers)
            charts.append({"name": name, "svg": Markup(svg),
                           "last": [[int(x), y] for x, y in points[-10:]]})
    reports = [e["report"] for e in events if e["kind"] == "delta" and e.get("report")]
    metrics = (reports[-1].get("metrics") or {}) if reports else {}
    deltas = [[k, m.get("before"), m.get("after"), m.get("delta"), m.get("ci95"),
               m.get("direction")] for k, m in metrics.items()]
    notes = [[e.get("step"), e["kind"], e.get("name") or "", e.get("message") or e.get("text")]
             for e in events if e["kind"] in ("note", "alarm")]
    return render("run.html", title=run["name"], run=run, run_id=run_id,
                  holdout=run.get("holdout_result"), charts=charts, deltas=deltas, notes=notes)


@router.get("/catalog")
def catalog_page(request: Request, store: StoreDep) -> Response:
    """The public catalog (no key needed)."""
    found = datasets.catalog(store)
    cards = [[c.get("agent"), c.get("name"), f"{c['owner']} ({c['ownerId']})", c.get("rows"),
              c.get("description") or ""] for c in found["datasets"]]
    agents = [[a["agent"], a["datasets"], a["rows"]] for a in found["agents"]]
    return render("catalog.html", title="Catalog", cards=cards, agents=agents,
                  signed_in=page_account(store, request) is not None)
