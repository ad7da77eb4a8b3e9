"""What a writer turns into an ask: the draft of a task, the situation, and the Writer protocol.

A model writer (``models``) implements :class:`Writer` exactly like the template
writer does: ``write(drafts)`` returns one ask per draft; ``follow_up`` gives the person's next
turn in a multi-turn rollout (or None when they have nothing more to say).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from whileai.simulations.agent.spec import AgentSpec
from whileai.simulations.generate.grid import Cell

__all__ = ["Draft", "Situation", "Writer"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Draft:
    """A task before it has words: the cell, its world values and what the judge should expect."""

    spec: AgentSpec
    cell: Cell
    visit: int
    phrasing: int
    candidate: int
    seed: int
    slots: Mapping[str, Any]
    nouns: Mapping[str, str]
    tools: tuple[str, ...]
    hidden_state: str
    reference: str
    world_state: Mapping[str, Any] = field(default_factory=dict)
    faults: tuple[Mapping[str, Any], ...] = ()
    answer: str = ""  # the gold a verifier checks ("" when the task has none)


@dataclass(frozen=True, slots=True, kw_only=True)
class Situation:
    """One task as the agent meets it: the ask, its world, its faults and its teacher-only block."""

    scenario_id: str
    prompt: str
    cell: Cell
    visit: int = 0
    phrasing: int = 0
    seed: int = 0
    world_state: Mapping[str, Any] = field(default_factory=dict)
    faults: tuple[Mapping[str, Any], ...] = ()
    hidden_state: str = ""
    reference: str = ""
    principle: str = ""
    slots: Mapping[str, Any] = field(default_factory=dict)
    tools: tuple[str, ...] = ()
    answer: str = ""  # the gold a verifier checks: a calculation's result, a record's status

    @property
    def dimensions(self) -> dict[str, str]:
        """The cell's axis values."""
        return self.cell.dimensions()

    @property
    def privileged(self) -> dict[str, str]:
        """The teacher-only block every row is born with."""
        block = {"hidden_state": self.hidden_state, "reference": self.reference}
        if self.principle:
            block["principle"] = self.principle
        if self.answer:
            block["answer"] = self.answer
        return block


@runtime_checkable
class Writer(Protocol):
    """Writes the person's side: the first ask of each draft, and later user turns."""

    name: str

    def write(self, drafts: Sequence[Draft]) -> list[str]:
        """Return one ask per draft, in order."""
        ...

    def follow_up(
        self, situation: Situation, transcript: Sequence[Mapping[str, Any]], *, turn: int
    ) -> str | None:
        """Return the person's next message, or None when the conversation is done."""
        ...
