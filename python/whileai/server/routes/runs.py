"""``/v1/runs``: training runs reported by ``zps.training_run`` or any HTTP client.

The writes are also served as plain ``POST /runs``, ``/runs/{id}/log``, ``/runs/{id}/events``
and ``/runs/{id}/finish`` (``plain_router``), the form a stack that is not Python reads about;
``GET /runs`` stays the runs page, so reads keep their ``/v1`` path.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Query
from pydantic import BaseModel, ConfigDict, Field

from whileai.server.routes.deps import Reader, StoreDep, Writer
from whileai.server.services import runs

__all__ = ["plain_router", "router"]

router = APIRouter(prefix="/v1/runs", tags=["runs"])


class RunIn(BaseModel):
    """``POST /v1/runs``: the client may choose the id (its run folder's): idempotent."""

    id: str | None = Field(default=None, pattern=r"^run_[A-Za-z0-9_-]{1,36}$")
    name: str = Field(min_length=1, max_length=300)
    dataset_id: str | None = None
    holdout_id: str | None = None
    base_model: str | None = None
    total_steps: int | None = None
    trainer: str | None = None
    config: dict[str, Any] = Field(default_factory=dict)


class RunOut(BaseModel):
    """A run's header."""

    model_config = ConfigDict(extra="allow")

    runId: str
    name: str
    status: str
    points: int


class RunList(BaseModel):
    """A page of runs, newest first."""

    runs: list[RunOut]
    total: int


class LogIn(BaseModel):
    """``POST /v1/runs/{id}/log``: up to 500 points ``{"step", <metric>: number, "seq"?}``."""

    points: list[dict[str, Any]]
    total_steps: int | None = None


class EventsIn(BaseModel):
    """``POST /v1/runs/{id}/events``: notes, alarms, holdout and delta results."""

    events: list[dict[str, Any]]


class StoredOut(BaseModel):
    """How many lines were new, and how many were already stored (a re-sent batch)."""

    stored: int
    skipped: int


class FinishIn(BaseModel):
    """``POST /v1/runs/{id}/finish``."""

    status: str
    summary: dict[str, Any] = Field(default_factory=dict)
    adapter: str | None = None


@router.post("", response_model=RunOut, summary="Start a run (idempotent on its id)")
def create(body: RunIn, store: StoreDep, account: Writer) -> dict[str, Any]:
    """Create the run, or return the one this account made with the same id."""
    return runs.create_run(store, account, body.model_dump())


@router.get("", response_model=RunList, summary="Your runs, newest first")
def list_runs(store: StoreDep, account: Reader, limit: int = Query(100, ge=1, le=1000),
              offset: int = Query(0, ge=0)) -> dict[str, Any]:
    """Headers only; ``GET /v1/runs/{id}`` has the series."""
    return runs.list_runs(store, account, limit=limit, offset=offset)


@router.get("/{run_id}", response_model=RunOut, summary="One run with its series and events")
def get(run_id: str, store: StoreDep, account: Reader) -> dict[str, Any]:
    """``series`` holds the points oldest first."""
    return runs.get_run(store, account, run_id)


@router.post("/{run_id}/log", response_model=StoredOut, summary="Add points")
def log(run_id: str, body: LogIn, store: StoreDep, account: Writer) -> dict[str, int]:
    """A point already stored (same ``seq``) is skipped."""
    return runs.log_points(store, account, run_id, body.points, body.total_steps)


@router.post("/{run_id}/events", response_model=StoredOut, summary="Add events")
def events(run_id: str, body: EventsIn, store: StoreDep,
           account: Writer) -> dict[str, int]:
    """An event already stored (same ``seq``) is skipped."""
    return runs.log_events(store, account, run_id, body.events)


@router.post("/{run_id}/finish", response_model=RunOut, summary="Finish a run")
def finish(run_id: str, body: FinishIn, store: StoreDep, account: Writer) -> dict[str, Any]:
    """``done``, ``failed`` or ``stopped``; a second finish changes nothing."""
    return runs.finish_run(store, account, run_id, body.status, body.summary, body.adapter)


plain_router = APIRouter(prefix="/runs", tags=["runs"])
for _path, _endpoint, _model in (("", create, RunOut), ("/{run_id}/log", log, StoredOut),
                                 ("/{run_id}/events", events, StoredOut),
                                 ("/{run_id}/finish", finish, RunOut)):
    plain_router.add_api_route(_path, _endpoint, methods=["POST"], response_model=_model,
                               summary=f"{_endpoint.__name__} (as POST /v1/runs{_path})")
