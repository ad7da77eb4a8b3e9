"""``recommend``: size a run from the agent's own covering grid, offline.

>>> rec = recommend(tools=[{"name": "get_order"}], system_prompt="Help.", mode="rl")
>>> rec["simulate_kwargs"]["mode"], rec["simulate_kwargs"]["repeats"]
('rl', 8)
"""

from __future__ import annotations

import math
from typing import Any

from whileai.errors import ConfigError
from whileai.simulations.agent.spec import agent_spec
from whileai.simulations.generate.grid import build_grid
from whileai.simulations.play.config import MODES
from whileai.simulations.play.source import SATURATION_VISITS

__all__ = ["format_recommendation", "recommend"]

_SELECTION_POOL = 3  # selection wants about this many candidates per row it keeps


def recommend(
    tools: object = None,
    system_prompt: str | None = None,
    *,
    policy: str | None = None,
    spec: Any = None,
    mode: str = "explore",
    target: int = 800,
    mixed_rate: float = 0.5,
    repeats: int = 8,
    probe: int = 2,
) -> dict[str, Any]:
    """How much to run for this agent, with the reasoning and ready ``simulate`` keywords.

    Args:
        mode: ``explore``, ``sft``, ``rl`` or ``adaptive``.
        target: rows you want to keep after selection (RL: rows in mixed groups).
        mixed_rate: share of asks whose rollouts disagree (RL); measure it and pass it back.

    Raises:
        ConfigError: an unknown mode, a target below 1, or a mixed_rate outside (0, 1].
    """
    if mode not in MODES:
        raise ConfigError(f"mode must be one of {', '.join(MODES)}; got {mode!r}")
    if target < 1:
        raise ConfigError(f"target must be at least 1, got {target}")
    if not 0.0 < mixed_rate <= 1.0:
        raise ConfigError(f"mixed_rate must be in (0, 1], got {mixed_rate}")
    prompt = system_prompt if system_prompt is not None else policy
    grid = build_grid(agent_spec(tools=tools, system_prompt=prompt, spec=spec))
    cells = len(grid.cells)
    saturation = SATURATION_VISITS * cells
    lines = [
        f"covering grid: {cells} cells for this agent",
        f"saturation wants {SATURATION_VISITS} visits per cell = {saturation} rows",
    ]
    kwargs: dict[str, Any] = {"mode": mode}
    if mode in ("explore", "sft"):
        generate = max(_SELECTION_POOL * target, saturation)
        lines.append(f"selection wants about {_SELECTION_POOL}x its target of {target} to "
                     "choose from")
        lines.append(f"generate {generate}, select {target} diverse 1-labeled rows")
        kwargs["budget"] = generate
    elif mode == "rl":
        groups = math.ceil(target / repeats)
        prompts = max(math.ceil(groups / mixed_rate), 1)
        rollouts = groups * repeats + (prompts - groups) * min(probe, repeats)
        lines.append(f"{target} rows in mixed groups of k={repeats} = {groups} mixed groups")
        lines.append(f"at a mixed rate of {mixed_rate:g}: probe {prompts} asks with {probe} "
                     "rollouts each")
        lines.append(f"budget {rollouts} rollouts (mixed groups filled to k, unanimous ones "
                     "stopped after the probe)")
        if prompts > cells:
            lines.append(f"{prompts} asks is more than the {cells} cells: cells are revisited")
        kwargs.update({"situations": prompts, "repeats": repeats, "budget": rollouts})
        generate = rollouts
    else:
        generate = saturation
        lines.append(f"adaptive: run until coverage plateaus, at most {saturation} rows")
        kwargs.update({"budget": saturation, "until": "saturation"})
    return {
        "mode": mode,
        "cells": cells,
        "saturation_rows": saturation,
        "target": target,
        "generate": generate,
        "reasoning": lines,
        "simulate_kwargs": kwargs,
    }


def format_recommendation(rec: dict[str, Any]) -> str:
    """The recommendation's reasoning, one line each."""
    return "\n".join(rec["reasoning"])
