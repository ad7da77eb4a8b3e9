"""One trace: its span tree (name, kind, duration, tokens, status), the conversation built
from it, its scores, and the cuts its task falls into.

``span_tree`` is pure: OTLP/JSON spans in, rows of the tree out (depth first, children by
start time; a span whose parent is not in the trace is a root).

>>> spans = [{"spanId": "b", "parentSpanId": "a", "name": "tool", "startTimeUnixNano": "2",
...           "endTimeUnixNano": "3000002"},
...          {"spanId": "a", "name": "chat", "kind": 3, "startTimeUnixNano": "1",
...           "endTimeUnixNano": "5000001", "status": {"code": 2, "message": "boom"},
...           "attributes": [{"key": "gen_ai.usage.input_tokens", "value": {"intValue": "7"}}]}]
>>> [(s["depth"], s["name"], s["kind"], s["ms"], s["tokens"], s["status"])
...  for s in span_tree(spans)]
[(0, 'chat', 'client', 5.0, '7 in', 'error: boom'), (1, 'tool', 'unspecified', 3.0, '', 'unset')]
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import RedirectResponse, Response

from whileai.server.pages.conversation import transcript
from whileai.server.pages.render import render
from whileai.server.pages.session import page_account
from whileai.server.routes.deps import StoreDep
from whileai.server.services.problems import ServiceError

__all__ = ["router", "span_tree"]

router = APIRouter(include_in_schema=False)
_KINDS = ("unspecified", "internal", "server", "client", "producer", "consumer")
_STATUS = {0: "unset", 1: "ok", 2: "error"}


def _attribute(span: Mapping[str, Any], key: str) -> Any:
    for item in span.get("attributes") or ():
        if isinstance(item, Mapping) and item.get("key") == key:
            value = item.get("value") or {}
            return next(iter(value.values()), None) if isinstance(value, Mapping) else None
    return None


def _nanos(value: Any) -> int | None:
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def _row(span: Mapping[str, Any], depth: int) -> dict[str, Any]:
    start, end = _nanos(span.get("startTimeUnixNano")), _nanos(span.get("endTimeUnixNano"))
    kind = span.get("kind", 0)
    if isinstance(kind, str):
        kind_name = kind.removeprefix("SPAN_KIND_").lower()
    else:
        kind_name = _KINDS[kind] if isinstance(kind, int) and 0 <= kind < len(_KINDS) else "-"
    status: Mapping[str, Any] = span["status"] if isinstance(span.get("status"), Mapping) \
        else {}
    code = status.get("code", 0)
    code_name = _STATUS.get(code, str(code)) if isinstance(code, int) else str(code).lower()
    tokens = [f"{v} {label}" for label, key in (("in", "gen_ai.usage.input_tokens"),
                                                ("out", "gen_ai.usage.output_tokens"))
              if (v := _attribute(span, key)) is not None]
    return {"depth": depth, "id": str(span.get("spanId") or ""), "name": str(span.get("name")),
            "kind": kind_name,
            "ms": round((end - start) / 1e6, 3) if start is not None and end is not None
            else None,
            "tokens": ", ".join(tokens),
            "status": f"{code_name}: {status['message']}" if status.get("message")
            else code_name,
            "model": _attribute(span, "gen_ai.request.model") or ""}


def span_tree(spans: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The spans depth first (see the module docstring)."""
    ids = {s.get("spanId") for s in spans}
    children: dict[Any, list[Mapping[str, Any]]] = {}
    for span in spans:
        parent = span.get("parentSpanId")
        children.setdefault(parent if parent in ids else None, []).append(span)
    for group in children.values():
        group.sort(key=lambda s: _nanos(s.get("startTimeUnixNano")) or 0)
    out: list[dict[str, Any]] = []
    stack = [(s, 0) for s in reversed(children.get(None, []))]
    seen: set[Any] = set()
    while stack:
        span, depth = stack.pop()
        if span.get("spanId") in seen:  # a cycle of parent ids: each span once
            continue
        seen.add(span.get("spanId"))
        out.append(_row(span, depth))
        stack.extend((c, depth + 1) for c in reversed(children.get(span.get("spanId"), [])))
    return out


@router.get("/traces/{trace_id}")
def trace_page(trace_id: str, request: Request, store: StoreDep) -> Response:
    """The span tree, the conversation, the scores and the task's cuts."""
    from whileai.server.services import cuts, trace_reads

    account = page_account(store, request)
    if account is None:
        return RedirectResponse("/signin", status_code=303)
    try:
        found = trace_reads.get_trace(store, account, trace_id)
    except ServiceError as exc:
        return render("notfound.html", 404, title="Not found", message=exc.message)
    row = found["row"]
    task = (row or {}).get("scenario_id") or (row or {}).get("prompt")
    cut = cuts.task_cut(store, account, agent=found["agent"], task=str(task)) if task else None
    return render("trace.html", title=f"Trace {found['traceId'][:12]}", trace=found,
                  tree=span_tree(found["spans"]), scores=sorted(found["scores"].items()),
                  view=transcript(row) if row else None, cut=cut)
