"""``/v1/agents``: list with counts, register (create or update), purge."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path

from whileai.server.routes.deps import Reader, StoreDep, Writer
from whileai.server.routes.models import AgentIn, AgentOut, PurgeOut
from whileai.server.services import agents

__all__ = ["router"]

router = APIRouter(prefix="/v1/agents", tags=["agents"])
Name = Annotated[str, Path(min_length=1, max_length=200)]  # as the agents table holds it


@router.get("", response_model=list[AgentOut], summary="Your agents with their counts")
def list_agents(store: StoreDep, account: Reader) -> list[dict[str, Any]]:
    """Registered agents and agents named by a push."""
    return agents.list_agents(store, account)


@router.put("/{name}", response_model=AgentOut, summary="Create or update an agent record")
def register(name: Name, body: AgentIn, store: StoreDep, account: Writer) -> dict[str, Any]:
    """Only the fields given change."""
    return agents.register(store, account, name, description=body.description,
                           tools=body.tools, system_prompt=body.systemPrompt)


@router.delete("/{name}", response_model=PurgeOut,
               summary="Remove an agent and everything under it")
def purge(name: Name, store: StoreDep, account: Writer,
          dry_run: bool = False) -> dict[str, Any]:
    """Permanent unless ``dry_run``."""
    return agents.purge(store, account, name, dry_run=dry_run)
