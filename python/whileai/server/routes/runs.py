"""``/v1/runs``: training runs reported by ``zps.training_run`` or any HTTP client.

The writes are also served as plain ``POST /runs``, ``/runs/{id}/log``, ``/runs/{id}/events``
and ``/runs/{id}/finish`` (``plain_router``), the form a stack that is not Python reads about;
``GET /runs`` stays the runs page, so reads keep their ``/v1`` path.
"""

from __future__ import annotations

import math
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query
from pydantic import BaseModel, ConfigDict, Discriminator, Field, Tag, model_validator

from whileai.server.routes.deps import Reader, StoreDep, Writer
from whileai.server.services import runs

__all__ = ["plain_router", "router"]

router = APIRouter(prefix="/v1/runs", tags=["runs"])

INT32 = 2**31 - 1  # the widest the run tables' integer columns hold
Count = Annotated[int, Field(ge=0, le=INT32)]
Step = Annotated[int, Field(ge=-INT32, le=INT32)]
Finite = Annotated[float, Field(allow_inf_nan=False)]
Short = Annotated[str, Field(max_length=300)]


class RunIn(BaseModel):
    """``POST /v1/runs``: the client may choose the id (its run folder's): idempotent."""

    id: str | None = Field(default=None, pattern=r"^run_[A-Za-z0-9_-]{1,36}$")
    name: str = Field(min_length=1, max_length=300)
    dataset_id: Short | None = Field(default=None, description="a ds_ id of yours or a public "
                                     "one, or any name")
    holdout_id: Short | None = None
    base_model: Short | None = None
    total_steps: Count | None = None
    trainer: str | None = Field(default=None, max_length=100)
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


class PointIn(BaseModel):
    """One point: ``step``, optional ``seq`` and ``time``, and any metrics (finite numbers)."""

    model_config = ConfigDict(extra="allow")

    step: Step
    seq: Count | None = None
    time: Finite | None = None

    @model_validator(mode="after")
    def _metrics_are_numbers(self) -> PointIn:
        for name, value in (self.model_extra or {}).items():
            if isinstance(value, bool) or not isinstance(value, (int, float)) or (
                    not math.isfinite(value)):
                raise ValueError(f"metric {name!r} must be a finite number")
        return self


class LogIn(BaseModel):
    """``POST /v1/runs/{id}/log``: up to 500 points ``{"step", <metric>: number, "seq"?}``."""

    points: list[PointIn]
    total_steps: Count | None = None


class _Event(BaseModel):
    """What every event has; other fields are kept as sent."""

    model_config = ConfigDict(extra="allow")

    kind: str = Field(min_length=1, max_length=20)
    seq: Count | None = None
    step: Step | None = None
    time: Finite | None = None


class HoldoutEvent(_Event):
    """``holdout``: the held-out metric before and after, and the verdict the run page shows."""

    kind: Literal["holdout"]
    before: Finite
    after: Finite
    metric: Short = "pass_rate"
    verdict: Short


class DeltaReport(BaseModel):
    """The part of a ``delta_report`` the run page reads: ``metrics`` by name."""

    model_config = ConfigDict(extra="allow")

    metrics: dict[str, dict[str, Any]] = Field(default_factory=dict)


class DeltaEvent(_Event):
    """``delta``: a ``delta_report``."""

    kind: Literal["delta"]
    report: DeltaReport


class AlarmEvent(_Event):
    """``alarm``: a monitor's name and message."""

    kind: Literal["alarm"]
    name: Short
    message: str


class NoteEvent(_Event):
    """``note``: a line on the run's summary."""

    kind: Literal["note"]
    text: str | None = None


def _event_kind(value: Any) -> str:
    kind = value.get("kind") if isinstance(value, dict) else getattr(value, "kind", None)
    return kind if kind in ("holdout", "delta", "alarm", "note") else "other"


Event = Annotated[
    Annotated[HoldoutEvent, Tag("holdout")] | Annotated[DeltaEvent, Tag("delta")]
    | Annotated[AlarmEvent, Tag("alarm")] | Annotated[NoteEvent, Tag("note")]
    | Annotated[_Event, Tag("other")],
    Discriminator(_event_kind)]


class EventsIn(BaseModel):
    """``POST /v1/runs/{id}/events``: notes, alarms, holdout and delta results (typed), and
    events of other kinds (``kind``, ``seq``, ``step``, ``time`` typed; the rest as sent)."""

    events: list[Event]


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
              offset: int = Query(0, ge=0, le=INT32)) -> dict[str, Any]:
    """Headers only; ``GET /v1/runs/{id}`` has the series."""
    return runs.list_runs(store, account, limit=limit, offset=offset)


@router.get("/{run_id}", response_model=RunOut, summary="One run with its series and events")
def get(run_id: str, store: StoreDep, account: Reader) -> dict[str, Any]:
    """``series`` holds the points oldest first."""
    return runs.get_run(store, account, run_id)


@router.post("/{run_id}/log", response_model=StoredOut, summary="Add points")
def log(run_id: str, body: LogIn, store: StoreDep, account: Writer) -> dict[str, int]:
    """A point already stored (same ``seq``) is skipped."""
    return runs.log_points(store, account, run_id,
                           [p.model_dump(exclude_unset=True) for p in body.points],
                           body.total_steps)


@router.post("/{run_id}/events", response_model=StoredOut, summary="Add events")
def events(run_id: str, body: EventsIn, store: StoreDep,
           account: Writer) -> dict[str, int]:
    """An event already stored (same ``seq``) is skipped."""
    return runs.log_events(store, account, run_id,
                           [e.model_dump(exclude_unset=True) for e in body.events])


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
