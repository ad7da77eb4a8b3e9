"""``/v1/traces`` (the OTLP/HTTP receiver and the trace list), ``/v1/scores``, ``/v1/cuts``."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request, Response
from pydantic import BaseModel, Field
from starlette.concurrency import run_in_threadpool

from whileai.server.errors import ApiError
from whileai.server.routes.deps import Reader, StoreDep, Writer
from whileai.server.services import Account, cuts, scoring, trace_reads, traces
from whileai.server.services.otlp import (
    decode_body,
    decode_logs_body,
    encode_response,
    encode_status,
)

__all__ = ["ExportGate", "otlp_error", "router"]

router = APIRouter(prefix="/v1", tags=["traces"])
# An OTLP batch is small (an SDK sends a few MB at most); a larger body is refused before it is
# held in memory, which keeps the receiver's memory bounded under a flood.
MAX_TRACE_BODY = 64 * 1024 * 1024
EXPORT_PATH = router.prefix + "/traces"  # where the OTLP receiver (``receive``) listens
LOGS_PATH = router.prefix + "/logs"  # and where it takes log records (``receive_logs``)


@dataclass
class ExportGate:
    """At most ``limit`` export requests held at once (reading their body, queued or being
    stored), and at most ``per_account`` of them for one account. One more is refused with 429
    and ``Retry-After`` before its body is read (the OTLP/HTTP way to say "overloaded";
    exporters retry), so a flood of spans holds at most ``limit`` bodies of at most
    ``MAX_TRACE_BODY`` bytes, never a queue without end, and one account (slow, stalled or
    flooding) leaves the other places to everyone else. Counted on the event loop, where every
    request enters and leaves: no lock needed.

    >>> gate = ExportGate(limit=3, per_account=2)
    >>> with gate.admit("a"), gate.admit("a"), gate.admit("b"):
    ...     gate.held
    3
    """

    limit: int
    per_account: int
    held: int = 0
    by_account: dict[str, int] = field(default_factory=dict)

    @contextmanager
    def admit(self, account_id: str) -> Iterator[None]:
        """Hold a place for the duration of the block, or raise ``ApiError("busy")``."""
        mine = self.by_account.get(account_id, 0)
        if self.held >= self.limit:
            raise ApiError("busy", f"{self.held} trace exports are in progress, the most this "
                                   "server holds at once; retry shortly", retry_after=1)
        if mine >= min(self.per_account, self.limit):
            raise ApiError("busy", f"this account has {mine} trace exports in progress, the "
                                   "most one account may hold at once; retry shortly",
                           retry_after=1)
        self.held += 1
        self.by_account[account_id] = mine + 1
        try:
            yield
        finally:
            self.held -= 1
            left = self.by_account[account_id] - 1
            if left:
                self.by_account[account_id] = left
            else:
                del self.by_account[account_id]


def otlp_error(request: Request, status: int, message: str,
               headers: dict[str, str] | None = None) -> Response | None:
    """The answer to a failed export request: a ``google.rpc.Status`` in the request's encoding,
    as OTLP/HTTP has it (None for any other request: it gets the platform's JSON error)."""
    if request.method != "POST" or request.url.path not in (EXPORT_PATH, LOGS_PATH):
        return None
    payload, media = encode_status(message, request.headers.get("content-type", ""))
    return Response(payload, status_code=status, media_type=media, headers=headers)


async def _body(request: Request, limit: int) -> bytes:
    """The request body, refused with 413 past ``limit`` bytes (never held whole beyond it)."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise ApiError("too_large", f"the request holds {declared} bytes; this server takes "
                                    f"at most {limit} per request")
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise ApiError("too_large", f"the body passed {limit} bytes, the most this server "
                                        "takes per request")
        chunks.append(chunk)
    return b"".join(chunks)


@router.post("/traces", summary="OTLP/HTTP trace export (protobuf or JSON, gzip allowed)",
             response_class=Response)
async def receive(request: Request, store: StoreDep, account: Writer) -> Response:
    """Store the spans; the reply is an ExportTraceServiceResponse in the request's encoding,
    with ``partialSuccess`` when some spans were rejected or traces were kept without a row
    (the message says why and what to turn on)."""
    return await _export(request, store, account, logs=False)


@router.post("/logs", summary="OTLP/HTTP log export: GenAI message records joined to their spans",
             response_class=Response)
async def receive_logs(request: Request, store: StoreDep, account: Writer) -> Response:
    """Store the log records with the spans they were emitted in (before or after those
    arrive); the reply is an ExportLogsServiceResponse in the request's encoding."""
    return await _export(request, store, account, logs=True)


async def _export(request: Request, store: StoreDep, account: Account, *,
                  logs: bool) -> Response:
    """One export request through the gate, the body limit and ``traces.ingest``."""
    limit = min(store.config.max_request_bytes, MAX_TRACE_BODY)
    content_type = request.headers.get("content-type", "")
    encoding = request.headers.get("content-encoding", "")
    decode = decode_logs_body if logs else decode_body
    gate: ExportGate = request.app.state.export_gate
    with gate.admit(account.id):
        body = await _body(request, limit)

        def store_body() -> dict[str, Any]:  # decoding is CPU work too: off the event loop
            return traces.ingest(store, account,
                                 lambda: decode(body, content_type, encoding, limit=limit))

        result = await run_in_threadpool(store_body)
    payload, media = encode_response(result["rejected"], result["message"], content_type,
                                     logs=logs)
    return Response(payload, media_type=media)


@router.get("/traces", summary="Your traces, newest first")
def list_traces(store: StoreDep, account: Reader, agent: str | None = None,
                limit: int = Query(100, ge=1, le=1000),
                offset: int = Query(0, ge=0, le=2**31 - 1)) -> dict[str, Any]:
    """A page of traces with their prompt, agent and scores; ``genai`` and ``raw`` counts."""
    return trace_reads.list_traces(store, account, agent=agent, limit=limit, offset=offset)


@router.get("/traces/{trace_id}", summary="One trace: its row, spans and scores")
def get_trace(trace_id: str, store: StoreDep, account: Reader) -> dict[str, Any]:
    """``row`` is the conversation (``rows_from_otel`` of the spans), None for a raw trace."""
    return trace_reads.get_trace(store, account, trace_id)


class ScoresIn(BaseModel):
    """``POST /v1/scores``: ``[{"traceId", "value", "name"?, ...}]``."""

    scores: list[dict[str, Any]] = Field(min_length=1, max_length=10000)


@router.post("/scores", summary="Grade finished traces (a re-sent name is a correction)")
def send_scores(body: ScoresIn, store: StoreDep, account: Writer) -> dict[str, Any]:
    """``applied``, ``unknown`` trace ids and ``rejected`` items; 404 when nothing landed."""
    return scoring.send_scores(store, account, body.scores)


_CUT_PARAMS = {"agent", "since", "holdout", "band_lo", "band_hi"}


@router.get("/cuts", summary="What a cut of your traces would hold")
def cuts_report(request: Request, store: StoreDep, account: Reader,
                agent: str | None = None, since: str = "all",
                holdout: float | None = Query(None, ge=0, le=1),
                band_lo: float | None = Query(None, ge=0, le=1),
                band_hi: float | None = Query(None, ge=0, le=1)) -> dict[str, Any]:
    """Other query parameters are trace filters (``model``, ``tool``, ``measure``)."""
    filters = {k: v for k, v in request.query_params.items() if k not in _CUT_PARAMS}
    band = None if band_lo is None and band_hi is None else (
        band_lo if band_lo is not None else 0.2, band_hi if band_hi is not None else 0.8)
    return cuts.cuts_report(store, account, agent=agent, since=since, band=band,
                            holdout=holdout, filters=filters)


Share = Annotated[float, Field(ge=0, le=1)]


class CutIn(BaseModel):
    """``POST /v1/cuts``: make the train and holdout datasets of a cut."""

    agent: str | None = None
    kind: str = "rl"
    since: str = "all"
    holdout: float | None = Field(default=None, ge=0, le=1)
    band: tuple[Share, Share] | None = None
    name: str | None = None
    filters: dict[str, Any] = Field(default_factory=dict)


@router.post("/cuts", summary="Cut training data out of your traces")
def make_cut(body: CutIn, store: StoreDep, account: Writer) -> dict[str, Any]:
    """Returns ``train`` and ``holdout`` dataset entries and the report they came from."""
    return cuts.cut(store, account, agent=body.agent, kind=body.kind, since=body.since,
                    holdout=body.holdout, band=body.band, name=body.name, filters=body.filters)
