"""``report_html``: one self-contained HTML file with the numbers of a graded run, and pictures.

The file has no external asset and no script: inline CSS and server-made SVG (``report.svg``), so
it opens from ``file://`` with no network. Sections: pass@1 / pass^k / pass@k with intervals; the
per-ask pass-rate histogram (what the mean hides); judge status counts; the hack scan ranking
against its noise floor, with the regime; markers; and the decontamination summary when given.
Every chart has its numbers in a table next to it.

>>> rows = [{"scenario_id": f"t{i % 4}", "prompt": "p", "reward": float(i % 3 == 0)}
...         for i in range(16)]
>>> page = report_html(rows, title="demo", scan=False)
>>> "<title>demo</title>" in page and 'class="mark"' in page
True
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from html import escape
from pathlib import Path
from typing import Any

from whileai.rows.outbound import outbound
from whileai.rows.source import as_rows
from whileai.simulations.clean.hack_scan import hack_scan
from whileai.simulations.judge.scored import status_counts
from whileai.simulations.measure.compare import marker_summary
from whileai.simulations.measure.passat import pass_at
from whileai.simulations.report.svg import bars, histogram

__all__ = ["STYLE", "Html", "page", "report_html", "table"]

STYLE = """
:root{color-scheme:light}
body{font:15px/1.5 system-ui,-apple-system,"Segoe UI",sans-serif;color:#1a1a1a;background:#fff;
margin:0 auto;max-width:980px;padding:0 20px 48px}
h1{font-size:1.6rem;margin:24px 0 4px}h2{font-size:1.2rem;margin:28px 0 8px}
table{border-collapse:collapse;margin:8px 0;font-variant-numeric:tabular-nums}
th,td{border-bottom:1px solid #ccc;padding:4px 10px;text-align:left}th{background:#f2f2f2}
a{color:#0b5394}a:focus,button:focus,input:focus{outline:3px solid #E69F00;outline-offset:2px}
.muted{color:#555}.warn{color:#8a1c00}.chart{max-width:100%;height:auto}
nav a{margin-right:14px}code,pre{background:#f4f4f4;padding:1px 4px;border-radius:3px}
.big{font-size:1.4rem;font-weight:600}
"""


class Html(str):
    """Text that is already HTML (a link, say): a table cell shows it as it is."""


def table(headers: list[str], rows: list[list[Any]], caption: str | None = None) -> str:
    """An HTML table with header cells (``scope="col"``); cells are escaped unless ``Html``."""
    head = "".join(f'<th scope="col">{escape(h)}</th>' for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{c if isinstance(c, Html) else escape(_cell(c))}</td>"
                                    for c in row) + "</tr>" for row in rows)
    cap = f"<caption class=\"muted\">{escape(caption)}</caption>" if caption else ""
    return f"<table>{cap}<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.3g}"
    if isinstance(value, (tuple, list)) and len(value) == 2 and all(
            isinstance(v, (int, float)) for v in value):
        return f"[{value[0]:.3g}, {value[1]:.3g}]"
    return str(value)


def page(title: str, body: str, *, nav: str = "") -> str:
    """A complete HTML document with the shared style."""
    return (f'<!doctype html><html lang="en"><head><meta charset="utf-8">'
            f'<meta name="viewport" content="width=device-width,initial-scale=1">'
            f"<title>{escape(title)}</title><style>{STYLE}</style></head><body>{nav}"
            f"<main>{body}</main></body></html>")


def _pass_section(rows: list[dict[str, Any]], seed: int) -> str:

    result = pass_at(rows, seed=seed)
    k = result.k if result.k is not None and result.pass_at_k is not None else "k"  # n/a: "k"
    metrics: list[list[Any]] = [["pass@1", result.pass_at_1, result.ci95],
               [f"pass^{k}", result.pass_pow_k, result.pass_pow_k_ci95],
               [f"pass@{k}", result.pass_at_k, result.pass_at_k_ci95],
               ["headroom", result.headroom, None]]
    rates = list(result.per_task.values())
    hist = histogram(rates, title="pass rate per ask", bins=10)
    counts = [[f"{i / 10:.1f}-{(i + 1) / 10:.1f}",
               sum(1 for r in rates if min(9, int(r * 10)) == i)] for i in range(10)]
    notes = "".join(f'<p class="muted">note: {escape(n)}</p>' for n in result.notes)
    return ("<h2>Pass rates</h2>" + table(["metric", "value", "95% interval"], metrics,
                                           f"{result.n_groups} asks, {result.n_rows} rows")
            + notes + "<h2>Pass rate per ask</h2><p class=\"muted\">The mean hides how it is "
            "spread: asks always solved or never solved teach a grouped update nothing.</p>"
            + hist + table(["pass rate", "asks"], counts))


def _status_section(rows: list[dict[str, Any]]) -> str:

    counts = status_counts(rows)
    return "<h2>Judge status</h2>" + table(["status", "rows"],
                                           [[k, v] for k, v in counts.items()])


def _scan_section(rows: list[dict[str, Any]], endorsed: list[str] | None, seed: int) -> str:

    report = hack_scan(rows, endorsed, seed=seed, progress=False)
    feats = report["features"][:12]
    tau = report["tau"]
    chart = bars([(f["name"], f["rho"], None, None) for f in feats],
                 title="within-ask correlation with reward", floor=tau) if feats else ""
    rows_out = [[f["name"], f["rho"], f["tier"], "yes" if f["endorsed"] else "",
                 "yes" if f["above_floor"] else ""] for f in feats]
    warnings = "".join(f'<p class="warn">{escape(w)}</p>' for w in report["warnings"])
    return (f"<h2>Hack scan</h2><p>regime <strong>{escape(str(report['regime']))}</strong>, "
            f"noise floor tau {escape(_cell(tau))}, top feature "
            f"<code>{escape(str(report['top_feature']))}</code></p>{warnings}{chart}"
            + table(["feature", "rho", "tier", "endorsed", "above floor"], rows_out))


def _marker_section(rows: list[dict[str, Any]], seed: int) -> str:

    summary = marker_summary(rows, seed=seed)
    if not summary:
        return ""
    return "<h2>Markers</h2>" + table(["marker", "mean", "95% interval", "asks"], [
        [name, s["mean"], s["ci95"], s["n_tasks"]] for name, s in sorted(summary.items())])


def _decontam_section(report: Mapping[str, Any]) -> str:
    return "<h2>Decontamination</h2>" + table(["rows", "kept", "dropped", "rate"], [
        [report.get("rows"), report.get("kept"), report.get("dropped"), report.get("rate")]]) \
        + table(["rule", "dropped"], [[k, v] for k, v in (report.get("by_rule") or {}).items()])


def report_html(source: Any, path: str | os.PathLike[str] | None = None, *,
                title: str = "whileai report", endorsed: list[str] | None = None,
                decontamination: Mapping[str, Any] | None = None, scan: bool = True,
                seed: int = 0) -> str:
    """Write (when ``path`` is given) and return a self-contained HTML report of graded rows.

    Args:
        source: graded rows, a ``SimulationData``/``ScoredData``, or a JSONL path.
        path: where to write the file.
        endorsed: passed to the hack scan (what the reward should track).
        decontamination: a ``decontaminate`` report to include.
        scan: include the hack scan section (it needs repeats per ask).

    Returns:
        The HTML text (built from the rows through the exit filter, ``rows.outbound``: no
        ``privileged`` text or secret can reach it).
    """
    rows = [outbound(r) for r in as_rows(source)]  # a file: the exit filter, as every door
    parts = [f"<h1>{escape(title)}</h1><p class=\"muted\">{len(rows)} rows</p>",
             _pass_section(rows, seed), _status_section(rows)]
    if scan:
        parts.append(_scan_section(rows, endorsed, seed))
    parts.append(_marker_section(rows, seed))
    if decontamination is not None:
        parts.append(_decontam_section(decontamination))
    html = page(title, "".join(parts))
    if path is not None:
        Path(path).write_text(html, encoding="utf-8")
    return html
