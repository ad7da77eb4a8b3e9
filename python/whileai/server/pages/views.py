"""The pages: datasets, a dataset, traces, runs, a run, and the public catalog.

Each page reads through the same services as the API and is plain HTML with server-made SVG
charts (``simulations.report.svg``); every chart has its numbers in a table beside it.
"""

from __future__ import annotations

import json
from functools import lru_cache
from html import escape
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from whileai.server.errors import ApiError
from whileai.server.pages.layout import PAGE_SIZE, document, pager, table, when
from whileai.server.pages.session import page_account
from whileai.server.routes.deps import StoreDep
from whileai.server.services import browse, cuts, datasets, profile, runs, traces
from whileai.simulations.report.html import Html
from whileai.simulations.report.svg import histogram, line_chart

__all__ = ["router"]

router = APIRouter(include_in_schema=False)
_PURPOSES = ("train", "holdout", "eval", "raw")
_SERIES = ("reward", "kl", "loss", "completion_length")


def _signin() -> Response:
    return RedirectResponse("/signin", status_code=303)


MAX_PAGE = (2**31 - 1) // PAGE_SIZE  # a page past it would ask SQL for an offset it refuses


def _page_no(request: Request) -> int:
    raw = request.query_params.get("page", "0")
    return min(int(raw), MAX_PAGE) if raw.isdigit() and len(raw) < 12 else 0


def _link(href: str, text: str) -> Html:
    return Html(f'<a href="{escape(href)}">{escape(text)}</a>')


def _dataset_link(dataset: dict[str, Any]) -> Html:
    return _link(f"/datasets/{dataset['datasetId']}", dataset["name"])


@router.get("/datasets", response_class=HTMLResponse)
def datasets_page(request: Request, store: StoreDep) -> Response:
    """Datasets by purpose, newest first, with lineage and cached profile numbers."""
    account = page_account(store, request)
    if account is None:
        return _signin()
    page_no = _page_no(request)
    found = browse.dataset_page(store, account, limit=PAGE_SIZE, offset=page_no * PAGE_SIZE)
    sections = []
    for purpose in _PURPOSES:
        items = [d for d in found["datasets"] if d["purpose"] == purpose]
        if not items:
            continue
        rows = [[_dataset_link(d), d["rows"], d["mode"], d["agent"],
                 (d["profile"] or {}).get("pass_rate"),
                 (d["profile"] or {}).get("gradient_support"),
                 d["parentId"] or "", when(d["createdAt"])] for d in items]
        html_rows = table(["name", "rows", "mode", "agent", "pass rate", "gradient support",
                           "parent", "created"], rows)
        sections.append(f"<h2>{purpose.title()} "
                        f"<span class=\"muted\">({found['by_purpose'].get(purpose, 0)})"
                        f"</span></h2>{html_rows}")
    body = (f"<h1>Datasets</h1><p>{found['total']} datasets</p>"
            + ("".join(sections) or "<p>No datasets yet.</p>")
            + pager("/datasets", page_no, found["total"])
            + "<h2>Push and pull</h2><pre>import whileai.simulations as zps\n"
            "entry = zps.push_rows(rows, \"my-set\")\nrows = zps.pull(entry[\"datasetId\"])"
            "</pre><p class=\"muted\">From the shell: <code>whileai datasets</code>, "
            "<code>whileai pull ID -o rows.jsonl</code>.</p>")
    return HTMLResponse(document("Datasets", body))


@router.get("/datasets/{dataset_id}", response_class=HTMLResponse)
def dataset_page(dataset_id: str, request: Request, store: StoreDep) -> Response:
    """One dataset: profile, per-task pass rates, three rows, its gate report and lineage."""
    account = page_account(store, request)
    if account is None:
        return _signin()
    try:
        info = datasets.get(store, account, dataset_id)
    except ApiError as exc:
        return HTMLResponse(document("Not found", f"<h1>Not found</h1><p>{escape(exc.message)}"
                                                  "</p>"), status_code=404)
    prof = profile.profile(store, account, dataset_id, force=False)
    sample = profile.preview(store, account, dataset_id)
    family = browse.lineage(store, account, dataset_id)
    rates = prof.get("per_task_pass_rate") or {}
    numbers = [["rows", prof.get("rows")], ["graded", prof.get("graded")],
               ["pass rate", prof.get("pass_rate")], ["tasks", prof.get("tasks")],
               ["tasks with a pass and a fail", prof.get("mixed_tasks")],
               ["gradient support", prof.get("gradient_support")],
               ["tool calls", (prof.get("tool_use") or {}).get("tool_calls")]]
    gate = _gate(store, account, dataset_id, prof.get("version"), info.get("mode"))
    rows_html = "".join(f"<pre>{escape(json.dumps(r, ensure_ascii=False, indent=1)[:1500])}"
                        "</pre>" for r in sample.get("sample") or [])
    parents = " ← ".join(_dataset_link(p) for p in family["parents"]) or "none"
    children = ", ".join(_dataset_link(c) for c in family["children"]) or "none"
    body = (f"<h1>{escape(info['name'])}</h1><p class=\"muted\">{escape(dataset_id)} · "
            f"{escape(info['purpose'])} · {info['rows']} rows</p>"
            f"<h2>Profile</h2>{table(['measure', 'value'], numbers)}"
            "<h2>Pass rate per task</h2>"
            + histogram(list(rates.values()), title="pass rate per task")
            + table(["task", "pass rate"], [[k, v] for k, v in list(rates.items())[:50]])
            + f"<h2>Gate</h2>{gate}<h2>Lineage</h2><p>parents: {parents}</p>"
            f"<p>children: {children}</p><h2>Three rows</h2>{rows_html}")
    return HTMLResponse(document(info["name"], body))


_GATE_ROWS = 2000


@lru_cache(maxsize=256)
def _gate(store: Any, account: Any, dataset_id: str, version: Any, mode: str | None) -> str:
    """The publish gate on the dataset's first rows (the push gate, when asked, saw them all),
    remembered per dataset ``version``: a dataset's rows change only with a new version."""
    from itertools import islice

    from whileai.simulations.io import read_jsonl
    from whileai.simulations.select.gate import publish_gate

    count = len(datasets.manifest(store, account, dataset_id).get("parts") or [])

    def rows() -> Any:
        for index in range(count):
            yield from read_jsonl(datasets.part_file(store, account, dataset_id, index))

    sample = list(islice(rows(), _GATE_ROWS))
    try:
        report = publish_gate(sample, mode=mode if mode in ("rl", "sft") else "auto",
                              progress=False)
    except Exception as exc:  # a refusal is the gate's answer, shown as such
        return f'<p class="warn">refused: {escape(str(exc))}</p>'
    signal = report.get("signal") or {}
    scan = report.get("hack_scan") or {}
    facts: list[list[Any]] = [["verdict", "passes" if report.get("ok") else "refused"],
             ["mode", report.get("mode")], ["rows checked", report.get("rows")],
             ["graded", report.get("graded")], ["asks with a pass and a fail",
                                                signal.get("mixed_asks")],
             ["hack scan", scan.get("regime")]]
    warnings = "".join(f'<p class="warn">{escape(str(w))}</p>' for w in report["warnings"])
    return table(["gate", "value"], facts) + warnings


@router.get("/traces", response_class=HTMLResponse)
def traces_page(request: Request, store: StoreDep) -> Response:
    """The cuts sentence first, then the runs table by agent with their scores."""
    account = page_account(store, request)
    if account is None:
        return _signin()
    from whileai.platform.traces import format_cuts

    agent = request.query_params.get("agent") or None
    page_no = _page_no(request)
    report = cuts.cuts_report(store, account, agent=agent)
    found = traces.list_traces(store, account, agent=agent, limit=PAGE_SIZE,
                               offset=page_no * PAGE_SIZE)
    lines = format_cuts(report, agent).splitlines()
    rows = [[t["traceId"], t["agent"], t["prompt"] and t["prompt"][:80], t["spans"],
             ", ".join(f"{k}={v:g}" for k, v in sorted(t["scores"].items())) or "unscored",
             when(t["createdAt"])] for t in found["traces"]]
    body = (f"<h1>Traces</h1><p class=\"big\">{escape(lines[0])}</p>"
            + "".join(f"<p>{escape(line)}</p>" for line in lines[1:])
            + f"<p class=\"muted\">{found['genai']} GenAI traces, {found['raw']} raw</p>"
            + table(["trace", "agent", "prompt", "spans", "scores", "received"], rows)
            + pager("/traces", page_no, found["total"]))
    return HTMLResponse(document("Traces", body))


@router.get("/runs", response_class=HTMLResponse)
def runs_page(request: Request, store: StoreDep) -> Response:
    """Training runs, newest first."""
    account = page_account(store, request)
    if account is None:
        return _signin()
    page_no = _page_no(request)
    found = runs.list_runs(store, account, limit=PAGE_SIZE, offset=page_no * PAGE_SIZE)
    rows = [[_link(f"/runs/{r['runId']}", r["name"]), r["status"], r["points"], r["last_step"],
             r["total_steps"],
             (r["holdout_result"] or {}).get("verdict"), when(r["created"])]
            for r in found["runs"]]
    body = (f"<h1>Runs</h1><p>{found['total']} runs</p>"
            + table(["name", "status", "points", "step", "of", "holdout", "started"], rows)
            + pager("/runs", page_no, found["total"]))
    return HTMLResponse(document("Runs", body))


def _series(points: list[dict[str, Any]], name: str) -> list[tuple[float, float]]:
    keys = [name, f"train/{name}", f"monitor/{name}", f"objective/{name}"]
    out = []
    for p in points:
        value = next((p[k] for k in keys if isinstance(p.get(k), (int, float))), None)
        if value is not None:
            out.append((float(p["step"]), float(value)))
    return out


@router.get("/runs/{run_id}", response_class=HTMLResponse)
def run_page(run_id: str, request: Request, store: StoreDep) -> Response:
    """A run: the holdout verdict, reward / KL / loss / length over steps with monitor events
    marked, the delta table, notes and alarms."""
    account = page_account(store, request)
    if account is None:
        return _signin()
    try:
        run = runs.get_run(store, account, run_id)
    except ApiError as exc:
        return HTMLResponse(document("Not found", f"<h1>Not found</h1><p>{escape(exc.message)}"
                                                  "</p>"), status_code=404)
    events = run["events"]
    markers = [(float(e["step"]), f"{e.get('name')}: {e.get('message')}") for e in events
               if e["kind"] == "alarm" and e.get("step") is not None]
    holdout = run.get("holdout_result")
    head = (f"<p class=\"big\">{escape(holdout['verdict'])}</p><p>held-out "
            f"{escape(str(holdout['metric']))}: {holdout['before']:.3g} → "
            f"{holdout['after']:.3g}</p>") if holdout else "<p class=\"muted\">no holdout " \
        "verdict yet (run.holdout(before, after))</p>"
    charts = []
    for name in _SERIES:
        points = _series(run["series"], name)
        if points:
            charts.append(f"<h2>{escape(name)}</h2>"
                          + line_chart({name: points}, title=f"{name} over steps",
                                       markers=markers)
                          + table(["step", name], [[int(x), y] for x, y in points[-10:]],
                                  "last 10 points"))
    deltas = [e["report"] for e in events if e["kind"] == "delta" and e.get("report")]
    delta_html = ""
    if deltas:
        metrics = deltas[-1].get("metrics") or {}
        delta_html = "<h2>Before and after</h2>" + table(
            ["metric", "before", "after", "delta", "95% interval", "direction"],
            [[k, m.get("before"), m.get("after"), m.get("delta"), m.get("ci95"),
              m.get("direction")] for k, m in metrics.items()])
    notes = [[e.get("step"), e["kind"], e.get("name") or "", e.get("message") or e.get("text")]
             for e in events if e["kind"] in ("note", "alarm")]
    body = (f"<h1>{escape(run['name'])}</h1><p class=\"muted\">{escape(run_id)} · "
            f"{escape(run['status'])} · {run['points']} points</p>{head}"
            + ("".join(charts) or "<p>No points yet.</p>") + delta_html
            + "<h2>Notes and alarms</h2>"
            + table(["step", "kind", "alarm", "text"], notes))
    return HTMLResponse(document(run["name"], body))


@router.get("/catalog", response_class=HTMLResponse)
def catalog_page(request: Request, store: StoreDep) -> Response:
    """The public catalog (no key needed)."""
    found = datasets.catalog(store)
    cards = [[c.get("agent"), c.get("name"), c.get("rows"), c.get("description") or ""]
             for c in found["datasets"]]
    body = ("<h1>Catalog</h1><p>Datasets published by their owners; anyone can pull them.</p>"
            + table(["agent", "dataset", "rows", "about"], cards)
            + "<h2>Agents</h2>"
            + table(["agent", "datasets", "rows"],
                    [[a["agent"], a["datasets"], a["rows"]] for a in found["agents"]]))
    signed_in = page_account(store, request) is not None
    return HTMLResponse(document("Catalog", body, signed_in=signed_in))
