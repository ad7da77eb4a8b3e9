"""Trace calls: scores on finished traces, the trace list, cuts and the datasets a cut makes.

Traces arrive over OTLP/HTTP (``POST /v1/traces`` on the same server; docs/platform.md shows the
exporter set-up); these calls read and grade them.

>>> print(format_cuts({"prompts": 4, "runs": 9, "scored": 9, "rl": {"prompts": 3, "runs": 9,
...     "train": 3, "holdout": 0}, "sft": {"prompts": 2}, "more": {"prompts": 1}}, "my-agent"))
3 prompts are worth training on
9 runs · 3 train · none held out
next: zps.cut(agent="my-agent", kind="rl")
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from whileai.cuts_text import format_cuts
from whileai.errors import ConfigError
from whileai.platform.http import call, connect, json_of

__all__ = ["cut", "cuts", "format_cuts", "list_traces", "send_score"]


def send_score(trace_id: str | None = None, value: float | bool | None = None,
               name: str = "score", scores: Sequence[Mapping[str, Any]] | None = None,
               api_key: str | None = None, *, base_url: str | None = None,
               **fields: Any) -> dict[str, Any]:
    """Grade traces that have finished: a run passes at ``score`` 1.0 or more.

    Re-sending the same ``name`` for a trace corrects it. Other keywords ride along on every
    score sent (``label=``, ``description=`` ...). ``trace_id`` is the 32-hex OTLP id, or a
    16-hex short form: its first half (or a 64-bit id the exporter zero-padded), accepted when
    exactly one of your traces matches; when several do, that score is rejected and the reply
    lists the candidates.

    Returns:
        ``{"applied", "unknown", "rejected"}``.

    Raises:
        NotFoundError: nothing landed (every trace id unknown to this account).
        ConfigError: neither ``trace_id``/``value`` nor ``scores`` was given.
    """
    items = [dict(s) for s in scores or []]
    if trace_id is not None:
        if value is None:
            raise ConfigError("send_score needs a value with trace_id, e.g. send_score(t, 1.0)")
        items.append({"traceId": trace_id, "value": value, "name": name})
    if not items:
        raise ConfigError("send_score needs trace_id and value, or scores=[{traceId, value}]")
    body = [{"name": name, **fields, **item} for item in items]
    conn = connect(api_key, base_url=base_url)
    result: dict[str, Any] = json_of(call(conn, "POST", "/v1/scores", json={"scores": body}))
    return result


def list_traces(agent: str | None = None, *, limit: int = 100, offset: int = 0,
                api_key: str | None = None, base_url: str | None = None) -> dict[str, Any]:
    """A page of your traces, newest first (``traces``, and ``genai`` / ``raw`` counts)."""
    conn = connect(api_key, base_url=base_url)
    found: dict[str, Any] = json_of(call(conn, "GET", "/v1/traces", params={
        "agent": agent, "limit": limit, "offset": offset}))
    return found


def cuts(agent: str | None = None, since: str = "all", api_key: str | None = None, *,
         base_url: str | None = None, **filters: Any) -> dict[str, Any]:
    """How your traces group into prompts, and what a cut would hold (read before ``cut``)."""
    conn = connect(api_key, base_url=base_url)
    found: dict[str, Any] = json_of(call(conn, "GET", "/v1/cuts", params={
        "agent": agent, "since": since, **filters}))
    return found


def cut(agent: str | None = None, kind: str = "rl", since: str = "all",
        holdout: float | None = None, band: tuple[float, float] | None = None,
        name: str | None = None, api_key: str | None = None, *, base_url: str | None = None,
        **filters: Any) -> dict[str, Any]:
    """Cut training data out of your traces: a train dataset and its held-out twin.

    ``kind="rl"`` keeps prompts passed some of the time (``band``, 20-80% by default);
    ``kind="sft"`` the best run of every prompt that ever passed. Any other keyword is a trace
    filter (``model=``, ``tool=``, ``measure=``).

    Returns:
        ``{"train": dataset, "holdout": dataset or None, "report": cuts report, "kind"}``.
    """
    conn = connect(api_key, base_url=base_url)
    made: dict[str, Any] = json_of(call(conn, "POST", "/v1/cuts", json={
        "agent": agent, "kind": kind, "since": since, "holdout": holdout,
        "band": list(band) if band is not None else None, "name": name, "filters": filters}))
    return made
