"""Rollout allocation: which rollout to run next, group by group.

``fixed``: every situation gets k rollouts. ``adaptive`` (``mode="rl"``): probe each situation
with ``probe`` rollouts; a group whose rollouts disagree is filled to k; a unanimous group gets
one more rollout only while the measured chance that its next rollout differs (the hazard, with
a 1/(n+2) prior) beats what a fresh situation yields per rollout (the run's mixed rate over the
probe, per probe rollout); when nothing fresh is left, stopped groups are resumed to k. The
rows of a stopped group are stamped ``early_stop: {"after": n, "k": k}``, so ``pass_at`` can
count a group that stayed unanimous as unanimous at the run's k instead of shrinking every
k-way number to the probe.
A lost rollout is run again, up to ``ATTEMPTS`` times; then it is given up and its group aims
one rollout lower, so one ask the agent always fails on cannot hold the whole run.

The allocator holds state but does no I/O: the engine feeds it outcomes and asks for jobs.

>>> alloc = Allocator(repeats=2, probe=2, adaptive=False)
>>> _ = alloc.open("S", arm="explore", reason="farthest")
>>> [j.rollout_index for j in (alloc.next_job(), alloc.next_job())]
[0, 1]
>>> alloc.next_job() is None
True
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Any

__all__ = ["ATTEMPTS", "Allocator", "Group", "Job"]

ATTEMPTS = 3  # tries of one rollout before it is given up


@dataclass(slots=True, eq=False)
class Group:
    """One situation's rollouts (mutable bookkeeping, engine-internal)."""

    situation: Any
    arm: str
    reason: str
    target: int
    issue_to: int
    issued: int = 0
    inflight: int = 0
    signatures: list[object] = field(default_factory=list)
    rows: list[dict[str, Any]] = field(default_factory=list)
    free: list[int] = field(default_factory=list)
    next_index: int = 0  # the next never-used rollout index
    losses: dict[int, int] = field(default_factory=dict)  # rollout index -> times lost
    given_up: int = 0
    state: str = "open"  # open, stopped, complete
    probed: bool = False
    next_arm: str = ""  # the arm of the rollouts still to issue after a decision

    @property
    def landed(self) -> int:
        """Rollouts that landed (rows)."""
        return len(self.signatures)

    @property
    def mixed(self) -> bool:
        """Whether the landed rollouts disagree."""
        return len(set(map(repr, self.signatures))) > 1


@dataclass(frozen=True, slots=True)
class Job:
    """One rollout to run."""

    group: Group
    rollout_index: int
    arm: str


class Allocator:
    """Decides the next rollout; see the module docstring for the rule."""

    def __init__(self, *, repeats: int, probe: int, adaptive: bool) -> None:
        self.k = repeats
        self.probe = max(1, min(probe, repeats))
        self.adaptive = adaptive and repeats > self.probe
        self.groups: list[Group] = []
        self.ready: deque[Group] = deque()
        self.trials: dict[int, int] = {}
        self.splits: dict[int, int] = {}
        self.probed = 0
        self.probe_mixed = 0
        self.fresh_left = True

    def open(self, situation: Any, *, arm: str, reason: str, repeats: int | None = None) -> Group:
        """Start a group for a new situation."""
        k = repeats or self.k
        first = self.probe if self.adaptive else k
        group = Group(situation=situation, arm=arm, reason=reason, target=k,
                      issue_to=min(first, k))
        self.groups.append(group)
        self.ready.append(group)
        return group

    def hazard(self, n: int) -> float:
        """Chance a group unanimous after n rollouts splits on the next (1/(n+2) prior)."""
        return (self.splits.get(n, 0) + 1) / (self.trials.get(n, 0) + n + 2)

    def fresh_rate(self) -> float:
        """Mixed groups a fresh situation yields per rollout spent probing it."""
        return (self.probe_mixed + 1) / (self.probed + 2) / self.probe

    def _issue(self, group: Group, arm: str) -> Job:
        if group.free:
            index = group.free.pop(0)
        else:
            index, group.next_index = group.next_index, group.next_index + 1
        group.issued += 1
        group.inflight += 1
        return Job(group=group, rollout_index=index, arm=arm)

    def next_job(self) -> Job | None:
        """The next rollout to run among open groups, or None (open a fresh group, or wait)."""
        while self.ready:
            group = self.ready[0]
            if group.state != "open":
                self.ready.popleft()
                continue
            if group.issued < group.issue_to:
                arm = group.next_arm or (group.arm if group.issued == 0 else (
                    "probe" if group.issued < self.probe and self.adaptive else "repeat"))
                return self._issue(group, arm)
            self.ready.popleft()
            if group.inflight:
                continue  # decided when its rollouts land
            job = self._decide(group)
            if job is not None:
                return job
        return None

    def _decide(self, group: Group) -> Job | None:
        if group.landed >= group.target:
            group.state = "complete"
            return None
        if not self.adaptive:
            group.issue_to = group.target
            self.ready.appendleft(group)
            return self.next_job()
        if group.mixed:
            group.issue_to = group.target
            group.next_arm = "fill"
            self.ready.appendleft(group)
            job = self._issue(group, "fill")
            return job
        if not self.fresh_left:  # nothing fresh to open: finish the group
            group.issue_to = group.target
            group.next_arm = "resume"
            self.ready.appendleft(group)
            return self._issue(group, "resume")
        if self.hazard(group.landed) > self.fresh_rate():
            group.issue_to = group.issued + 1
            return self._issue(group, "extend")
        group.state = "stopped"
        for row in group.rows:  # pass_at reads a unanimous stopped group at the run's k
            row["early_stop"] = {"after": group.landed, "k": group.target}
        return None

    def land(self, job: Job, signature: object | None, row: dict[str, Any] | None) -> None:
        """Record one finished rollout (``signature`` None = the rollout was lost)."""
        group = job.group
        group.inflight -= 1
        if signature is None:
            group.issued -= 1
            tries = group.losses[job.rollout_index] = group.losses.get(job.rollout_index, 0) + 1
            if tries >= ATTEMPTS:  # give this rollout up: the group aims one lower
                group.given_up += 1
                group.target -= 1
                group.issue_to = min(group.issue_to, group.target)
            else:
                group.free.append(job.rollout_index)
                group.free.sort()
        else:
            before_unanimous = group.landed >= 1 and not group.mixed
            n_before = group.landed
            group.signatures.append(signature)
            if row is not None:
                group.rows.append(row)
            if job.arm in ("extend", "resume") and before_unanimous:
                self.trials[n_before] = self.trials.get(n_before, 0) + 1
                if group.mixed:
                    self.splits[n_before] = self.splits.get(n_before, 0) + 1
        if group.inflight == 0 and group.state == "open":
            if not group.probed and group.landed >= min(self.probe, group.target):
                group.probed = True
                self.probed += 1
                self.probe_mixed += int(group.mixed)
            self.ready.append(group)

    def resume_stopped(self) -> bool:
        """Nothing fresh is left: reopen stopped groups so they finish to k."""
        self.fresh_left = False
        again = [g for g in self.groups if g.state == "stopped"]
        for group in again:
            group.state = "open"
            for row in group.rows:  # it goes on to k: no longer an early stop
                row.pop("early_stop", None)
            self.ready.append(group)
        return bool(again)

    def report(self) -> dict[str, int]:
        """Counts for ``data.search["groups"]``."""
        stopped = [g for g in self.groups if g.state == "stopped"]
        return {
            "groups": len(self.groups),
            "mixed": sum(1 for g in self.groups if g.mixed),
            "stopped": len(stopped),
            "complete": sum(1 for g in self.groups if g.landed >= g.target),
            "partial": sum(1 for g in self.groups
                           if g.landed < g.target and g.state != "stopped"),
            "rollouts_saved": sum(g.target - g.landed for g in stopped),
        }
