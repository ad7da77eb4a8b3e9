"""The hack scan of a dataset: features ranked by their within-ask correlation with reward
against the noise floor, and for the top feature, rows with and without it from the same ask.

The ranking is the library's ``hack_scan`` (the chart is the HTML report's ``bars``); which
rows carry a feature comes from the scan's own ``feature_columns`` (a conjunction has no
column: then the pairs are of the best-ranked feature that has one, and the page says so).
A dataset past ``SCAN_ROWS`` rows is scanned on its first ``SCAN_ROWS``, and says so.
``?endorsed=a,b`` names what the reward should track (the scan's ``endorsed``).

>>> pairs_for("f", {"f": ([0, 2], [1.0, 1.0])}, ["a", "a", "b", "b"], limit=3)
[{'task': 'a', 'with': 0, 'without': 1}, {'task': 'b', 'with': 2, 'without': 3}]
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import Response
from markupsafe import Markup

from whileai.server.pages.render import render
from whileai.server.pages.rows import Site, open_site

__all__ = ["SCAN_ROWS", "pairs_for", "router"]

router = APIRouter(include_in_schema=False)
SCAN_ROWS = 20_000
_EXAMPLES = 4


def pairs_for(feature: str, columns: dict[str, Any], tasks: list[str], *,
              limit: int = _EXAMPLES) -> list[dict[str, Any]]:
    """Up to ``limit`` asks with one row that has ``feature`` and one that has not (positions
    into the scanned rows, the first of each, asks in order of first appearance)."""
    column = columns.get(feature)
    if column is None:
        return []
    having = set(column[0])
    first_with: dict[str, int] = {}
    first_without: dict[str, int] = {}
    for i, task in enumerate(tasks):
        (first_with if i in having else first_without).setdefault(task, i)
    return [{"task": t, "with": first_with[t], "without": first_without[t]}
            for t in first_with if t in first_without][:limit]


@router.get("/datasets/{dataset_id}/hacks")
def hacks_page(dataset_id: str, request: Request) -> Response:
    """The ranked features with the noise floor, and the top feature's example pairs."""
    from whileai.simulations.clean.hack_columns import feature_columns
    from whileai.simulations.clean.hack_scan import hack_scan
    from whileai.simulations.report.svg import bars

    site = open_site(request, dataset_id)
    if not isinstance(site, Site):
        return site
    count = min(len(site.index), SCAN_ROWS)
    rows = [site.index.row(i) for i in range(count)]
    endorsed = [e.strip() for e in request.query_params.get("endorsed", "").split(",")
                if e.strip()][:20]
    report = hack_scan(rows, endorsed or None, seed=0, progress=False)
    features = report["features"][:15]
    chart = bars([(f["name"], f["rho"], None, None) for f in features],
                 title="within-ask correlation with reward", floor=report["tau"]) \
        if features else ""
    columns = feature_columns(rows)
    tasks = [s.task for s in site.index.summaries[:count]]
    shown, pairs = None, []
    for feature in report["features"]:  # the top feature, or the first one rows can show
        pairs = pairs_for(feature["name"], columns, tasks)
        if pairs:
            shown = feature["name"]
            break
    for pair in pairs:
        pair["with_row"] = site.index.summaries[pair["with"]]
        pair["without_row"] = site.index.summaries[pair["without"]]
    table = [[f["name"], f["rho"], f["tier"], "yes" if f["endorsed"] else "",
              "yes" if f["above_floor"] else ""] for f in features]
    return render("hacks.html", title=f"Hack scan · {site.name}", dataset_id=site.dataset_id,
                  name=site.name, report=report, chart=Markup(chart), features=table,
                  pairs=pairs, shown=shown, scanned=count, endorsed=", ".join(endorsed),
                  total=len(site.index), local=site.local, signed_in=site.local is None)
