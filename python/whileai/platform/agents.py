"""Agent calls: list with counts, register (create or update), purge."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from whileai.platform.http import call, connect, json_of

__all__ = ["agents", "purge_agent", "register_agent"]


def agents(api_key: str | None = None, *, base_url: str | None = None) -> list[dict[str, Any]]:
    """Every agent on the account with its counts: traces, sets by purpose, public cards.

    >>> [a["agent"] for a in agents()]  # doctest: +SKIP
    ['airline-support']
    """
    out: list[dict[str, Any]] = json_of(call(connect(api_key, base_url=base_url), "GET",
                                             "/v1/agents"))
    return out


def register_agent(name: str, description: str | None = None, tools: list[Any] | None = None,
                   system_prompt: str | None = None, api_key: str | None = None, *,
                   base_url: str | None = None) -> dict[str, Any]:
    """Create or update an agent record (only the fields given change); return it."""
    body = {"description": description, "tools": tools, "systemPrompt": system_prompt}
    out: dict[str, Any] = json_of(call(connect(api_key, base_url=base_url), "PUT",
                                       f"/v1/agents/{quote(name, safe='')}", json=body))
    return out


def purge_agent(agent: str, dry_run: bool = False, api_key: str | None = None, *,
                base_url: str | None = None) -> dict[str, Any]:
    """Remove an agent, its traces and datasets; ``dry_run`` only counts.

    Returns ``{"agent", "traces", "datasets", "deleted"}`` (plus ``datasetIds``).
    """
    out: dict[str, Any] = json_of(call(connect(api_key, base_url=base_url), "DELETE",
                                       f"/v1/agents/{quote(agent, safe='')}",
                                       params={"dry_run": dry_run}))
    return out
