"""The rollout being played right now: its world records, fault plan and the faults that fired.

The engine opens one :class:`RolloutContext` per rollout in the worker thread that plays it
(``using_rollout``); ``World.call`` and the caller's ``execute`` read it through
``current_rollout()``. Context variables are per thread, so parallel rollouts never share one.

>>> current_rollout() is None
True
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

__all__ = ["RolloutContext", "current_rollout", "using_rollout"]


class RolloutContext:
    """Mutable per-rollout state; lives only while one rollout is played."""

    __slots__ = (
        "calls",
        "faults",
        "fired",
        "prompt",
        "records",
        "rollout_index",
        "scenario_id",
        "seed",
        "situation",
    )

    def __init__(
        self,
        *,
        scenario_id: str,
        prompt: str,
        rollout_index: int,
        seed: int,
        world_state: Mapping[str, Any],
        faults: Sequence[Mapping[str, Any]],
        situation: object = None,
    ) -> None:
        self.scenario_id = scenario_id
        self.prompt = prompt
        self.rollout_index = rollout_index
        self.seed = seed
        self.situation = situation
        records = world_state.get("records") or {}
        # World.call changes only a record's top-level fields, so a copy per record is enough
        self.records: dict[str, dict[str, Any]] = {
            key: dict(value) for key, value in records.items()
        }
        self.faults = [dict(f) for f in faults]
        self.calls: dict[str, int] = {}
        self.fired: list[dict[str, Any]] = []

    def next_fault(self, tool: str) -> str | None:
        """Count a call to ``tool`` and return the fault kind scheduled for it, if any."""
        n = self.calls.get(tool, 0)
        self.calls[tool] = n + 1
        total = sum(self.calls.values()) - 1
        for fault in self.faults:
            if fault.get("tool") in (tool, "*") and fault.get("call") == n:
                self.fired.append({"tool": tool, "kind": fault["kind"], "call": n, "index": total})
                return str(fault["kind"])
        return None


_CURRENT: ContextVar[RolloutContext | None] = ContextVar("whileai_rollout", default=None)


def current_rollout() -> RolloutContext | None:
    """The rollout being answered in this thread (``.prompt``, ``.rollout_index``), or None."""
    return _CURRENT.get()


@contextmanager
def using_rollout(context: RolloutContext) -> Iterator[RolloutContext]:
    """Make ``context`` the current rollout for the duration of the block."""
    token = _CURRENT.set(context)
    try:
        yield context
    finally:
        _CURRENT.reset(token)
