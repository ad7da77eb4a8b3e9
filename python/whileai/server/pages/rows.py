"""The row pages: the row list, one conversation, hand labels and the judge's agreement.

The same handlers serve a platform dataset (``/datasets/<id>/rows``, signed in, the index
built from the dataset's parts and kept per dataset version) and a local file under
``whileai view`` (``/datasets/local/rows``: the app carries a ``Viewer``, no account).
Labels go beside a local file, or to the server folder's ``labels/<id>.jsonl``; either way in
the shape ``attach_labels`` reads.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, RedirectResponse, Response

from whileai.errors import RowError
from whileai.server.errors import ApiError
from whileai.server.pages.conversation import transcript
from whileai.server.pages.guard import check_form
from whileai.server.pages.indexcache import IndexCache
from whileai.server.pages.labels import (
    agreement,
    append_label,
    label_facet,
    label_line,
    latest,
    positions,
    read_labels,
)
from whileai.server.pages.layout import page_no
from whileai.server.pages.render import render
from whileai.server.pages.rowindex import FACETS, SORTS, Query, RowIndex
from whileai.server.pages.session import page_account
from whileai.server.services.problems import ServiceError

__all__ = ["COMPARE_ID", "LOCAL_ID", "Site", "Viewer", "missing", "open_site", "router"]

LOCAL_ID = "local"
COMPARE_ID = "compare"  # whileai view A --compare B: B's rows
_SIZES = (25, 50, 100, 200)
router = APIRouter(include_in_schema=False)


@dataclass(frozen=True, slots=True, kw_only=True)
class Viewer:
    """What ``whileai view`` serves: one indexed source, its labels file, the privileged flag."""

    name: str
    index: RowIndex
    labels: Path
    show_privileged: bool = False
    annotator: str = "local"


@dataclass(frozen=True, slots=True, kw_only=True)
class Site:
    """The rows a request reads, wherever they live."""

    dataset_id: str
    name: str
    index: RowIndex
    labels: Path
    annotator: str
    show_privileged: bool
    local: str | None


_CACHE_LOCK = threading.Lock()


def _indexes(request: Request) -> IndexCache:
    """The app's index cache (made on first use)."""
    with _CACHE_LOCK:
        cache: IndexCache | None = getattr(request.app.state, "row_indexes", None)
        if cache is None:
            cache = request.app.state.row_indexes = IndexCache()
        return cache


def open_site(request: Request, dataset_id: str) -> Site | Response:
    """The rows behind ``dataset_id``, or the response to give instead (sign in, not found)."""
    viewers: dict[str, Viewer] | None = getattr(request.app.state, "viewers", None)
    if viewers is not None:
        viewer = viewers.get(dataset_id)
        if viewer is None:
            return missing(f"this viewer serves {', '.join(viewers)}, at "
                            f"/datasets/{LOCAL_ID}/rows", LOCAL_ID)
        return Site(dataset_id=dataset_id, name=viewer.name, index=viewer.index,
                    labels=viewer.labels, annotator=viewer.annotator,
                    show_privileged=viewer.show_privileged, local=LOCAL_ID)
    from whileai.server.services import datasets

    store = request.app.state.store
    account = page_account(store, request)
    if account is None:
        return RedirectResponse("/signin", status_code=303)
    try:
        info = datasets.get(store, account, dataset_id)
    except ServiceError as exc:
        return missing(exc.message, None)
    from whileai.server.pages.rowsource import dataset_index

    key = (dataset_id, info["updatedAt"], info["rows"], info["bytes"])
    index = _indexes(request).get(key, lambda: dataset_index(store, account, dataset_id),
                                  rows=int(info["rows"]))
    if index is None:
        return render("indexing.html", title=f"Indexing · {info['name']}", name=info["name"],
                      rows=info["rows"], dataset_id=dataset_id)
    return Site(dataset_id=dataset_id, name=info["name"], index=index,
                labels=store.config.directory / "labels" / f"{dataset_id}.jsonl",
                annotator=account.name,
                show_privileged=False, local=None)


def missing(message: str, local: str | None) -> Response:
    """The not-found page (with the local viewer's navigation when ``local``)."""
    return render("notfound.html", 404, title="Not found", message=message, local=local,
                  signed_in=local is None)


def _query(request: Request) -> Query:
    params = request.query_params
    facets = {name: tuple(params.getlist(name)) for name in FACETS if params.getlist(name)}
    sort = params.get("sort", "position")
    size = int(params["size"]) if params.get("size", "").isdigit() else 50
    return Query(facets=facets, text=params.get("q", "")[:200],
                 sort=sort if sort in SORTS else "position", descending=params.get("desc") == "1",
                 page=page_no(request), size=size if size in _SIZES else 50)


def _base(site: Site) -> dict[str, Any]:
    return {"dataset_id": site.dataset_id, "name": site.name, "local": site.local,
            "signed_in": site.local is None}


@router.get("/datasets/{dataset_id}/rows")
def rows_page(dataset_id: str, request: Request) -> Response:
    """The row list: facets with counts, search, sort, a page of rows."""
    site = open_site(request, dataset_id)
    if not isinstance(site, Site):
        return site
    query = _query(request)
    labelled = positions(site.index, read_labels(site.labels))
    found = site.index.query(query, {"label": label_facet(site.index, labelled)})
    items = [{"position": p, "s": site.index.summaries[p],
              "label": labelled[p]["gold_reward"] if p in labelled else None}
             for p in found.page]
    keep = [(k, v) for k, v in request.query_params.multi_items() if k != "page"]
    unsorted = [(k, v) for k, v in keep if k not in ("sort", "desc")]
    return render("rows.html", title=f"Rows · {site.name}", **_base(site), query=query,
                  found=found, items=items, facets=FACETS, sorts=SORTS, sizes=_SIZES,
                  rows_total=len(site.index), keep=urlencode(keep) + ("&" if keep else ""),
                  unsorted=urlencode(unsorted) + ("&" if unsorted else ""))


@router.get("/datasets/{dataset_id}/rows/{position}")
def row_page(dataset_id: str, position: int, request: Request) -> Response:
    """One conversation: the transcript, the verdict, the grid cell, siblings, the label box."""
    site = open_site(request, dataset_id)
    if not isinstance(site, Site):
        return site
    try:
        row = site.index.row(position, keep_privileged=site.show_privileged)
    except RowError as exc:
        return missing(str(exc), site.local)
    summary = site.index.summaries[position]
    label = latest(read_labels(site.labels)).get((summary.task, summary.rollout or 0))
    siblings = [{"position": p, "s": site.index.summaries[p]}
                for p in site.index.siblings(position)]
    return render("row.html", title=f"Row {position} · {site.name}", **_base(site),
                  position=position, summary=summary, view=transcript(
                      row, show_privileged=site.show_privileged), siblings=siblings,
                  label=label, previous=position - 1 if position > 0 else None,
                  next=position + 1 if position + 1 < len(site.index) else None)


@router.post("/datasets/{dataset_id}/rows/{position}/label")
async def label_row(dataset_id: str, position: int, request: Request) -> Response:
    """Store a hand label (JSON ``{"value": 1|0, "note": ...}`` or the label form)."""
    site = open_site(request, dataset_id)
    if not isinstance(site, Site):
        return site
    if request.headers.get("content-type", "").startswith("application/json"):
        body = await request.json()
    else:
        body = dict(await request.form())
    if site.local is None:  # the server's pages: this browser's token, from this server
        try:
            check_form(request, str(body.get("csrf") or "") if isinstance(body, dict) else "")
        except ApiError as exc:
            return JSONResponse({"error": exc.code, "message": exc.message},
                                status_code=exc.status)
    raw = body.get("value") if isinstance(body, dict) else None
    value = int(raw) if isinstance(raw, (int, str)) and str(raw) in ("0", "1") else raw
    try:
        row = site.index.row(position)
        line = label_line(row, value, note=str(body.get("note") or ""),
                          annotator=site.annotator)
    except RowError as exc:
        return JSONResponse({"error": "bad_request", "message": str(exc)}, status_code=400)
    append_label(site.labels, line)
    if isinstance(body, dict) and body.get("via") == "form":
        return RedirectResponse(f"/datasets/{dataset_id}/rows/{position}", status_code=303)
    return JSONResponse({"ok": True, "label": line})


@router.get("/datasets/{dataset_id}/agreement")
def agreement_page(dataset_id: str, request: Request) -> Response:
    """The judge against the hand labels so far: agreement, kappa with its interval, the
    confusion table, and the rows where they disagree."""
    site = open_site(request, dataset_id)
    if not isinstance(site, Site):
        return site
    lines = read_labels(site.labels)
    report = agreement(site.index, lines)
    return render("agreement.html", title=f"Agreement · {site.name}", **_base(site),
                  report=report, labels_path=str(site.labels) if site.local else None)


@router.get("/datasets/{dataset_id}/labels.jsonl")
def labels_file(dataset_id: str, request: Request) -> Response:
    """The label lines as stored (the file ``attach_labels`` reads)."""
    site = open_site(request, dataset_id)
    if not isinstance(site, Site):
        return site
    body = site.labels.read_bytes() if site.labels.exists() else b""
    return Response(body, media_type="application/x-ndjson")
