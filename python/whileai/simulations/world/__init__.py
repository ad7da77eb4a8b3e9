"""The mock tool environment: records, fault schedule, and the per-rollout context."""

from __future__ import annotations

from whileai.simulations.world.mock import World, world
from whileai.simulations.world.rollout import RolloutContext, current_rollout, using_rollout

__all__ = ["RolloutContext", "World", "current_rollout", "using_rollout", "world"]
