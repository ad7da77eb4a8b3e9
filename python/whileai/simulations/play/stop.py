"""Why a run stopped: the closed set of ``stopped_because`` values (docs/simulate.md).

The engine sets the budget, clock and failure reasons; the situation source says when it ran
out (``situations_exhausted``, ``tasks_done``, ``saturation``); a spent quota names the model
role whose quota it was.

>>> quota_stop(RuntimeError("429"))
'agent_quota_exceeded'
"""

from __future__ import annotations

from typing import Literal, cast, get_args

__all__ = ["STOP_REASONS", "StopReason", "quota_stop"]

StopReason = Literal[
    "budget",
    "time_budget",
    "situations_exhausted",
    "saturation",
    "tasks_done",
    "agent_failed",
    "agent_errors",
    "agent_quota_exceeded",
    "writer_quota_exceeded",
    "judge_quota_exceeded",
]
"""Why a run stopped, ``stopped_because`` (docs/simulate.md lists what each value means)."""
STOP_REASONS: tuple[StopReason, ...] = get_args(StopReason)


def quota_stop(exc: Exception) -> StopReason:
    """The stop reason of a spent quota: its ``stopped_because``, else the agent's quota."""
    # ModelQuotaError says `<role>_quota_exceeded`; a run's model roles are agent, writer, judge.
    return cast("StopReason", str(getattr(exc, "stopped_because", "") or "agent_quota_exceeded"))
