"""The agent specs under ``tests/fixtures/`` (``retail_spec``, ``airline_spec``, ...), by stem."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from whileai.simulations.agent.spec import AgentSpec, agent_spec

FIXTURES = Path(__file__).resolve().parent / "fixtures"


def spec_data(name: str) -> dict[str, Any]:
    """The JSON of ``fixtures/<name>.json``: ``tools``, ``system_prompt`` and whatever else."""
    data: dict[str, Any] = json.loads((FIXTURES / f"{name}.json").read_text())
    return data


def load(name: str) -> AgentSpec:
    """The ``AgentSpec`` of ``fixtures/<name>.json``."""
    data = spec_data(name)
    return agent_spec(tools=data["tools"], system_prompt=data["system_prompt"])
