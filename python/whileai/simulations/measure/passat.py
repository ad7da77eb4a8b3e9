"""pass@1, pass^k and pass@k over graded rows, with bootstrap intervals.

Rows are grouped into tasks by ``task_key`` (``scenario_id``, else ``task_id``, else ``prompt``).
A rollout passes when its reward is at least ``threshold`` (0.5: partial credit splits there).
pass@1 is the mean over tasks of each task's pass rate; pass^k and pass@k are the means over
tasks of the unbiased per-task estimates ``C(c, k) / C(n, k)`` and ``1 - C(n - c, k) / C(n, k)``
where ``n`` is the task's judged rollouts, ``c`` its passes, and ``k`` the smallest group.

A group ``simulate(mode="rl")`` stopped early as unanimous (its rows carry
``early_stop: {"after": n, "k": k}``) counts as unanimous at its k when its graded rollouts
agree, so the probe does not shrink every k-way number; one whose rewards split is left out of
pass^k and pass@k (its later rollouts were never run), as is a group the run cut short
(``group_cut``: the budget or the clock ended it). Each is counted in ``notes``.

>>> rows = [{"task_id": "a", "reward": r} for r in (1, 1, 0, 0)]
>>> pass_at(rows, n_resamples=50).pass_at_1
0.5
"""

from __future__ import annotations

from dataclasses import dataclass, field
from math import comb
from typing import Any

from whileai.errors import ConfigError
from whileai.rows.keywords import valid_kwargs
from whileai.rows.source import as_rows, read_reward, task_key
from whileai.simulations.measure.stats import DEFAULT_RESAMPLES, bootstrap_ci, mean

__all__ = [
    "MIN_K",
    "PassAt",
    "early_stops",
    "group_outcomes",
    "pass_at",
    "pass_at_k_estimate",
    "pass_pow_k_estimate",
]

MIN_K = 4  # below this many repeats the k-way numbers are too noisy to print
MIN_GROUPS_FOR_CI = 3


def pass_at_k_estimate(n: int, c: int, k: int) -> float:
    """Unbiased pass@k for one task: the chance that k of its n rollouts include a pass.

    >>> round(pass_at_k_estimate(10, 3, 5), 7)
    0.9166667
    """
    _check_nck(n, c, k)
    return 1.0 - comb(n - c, k) / comb(n, k)


def pass_pow_k_estimate(n: int, c: int, k: int) -> float:
    """Unbiased pass^k for one task: the chance that k of its n rollouts all pass.

    >>> pass_pow_k_estimate(8, 6, 4) == 15 / 70
    True
    """
    _check_nck(n, c, k)
    return comb(c, k) / comb(n, k)


def _check_nck(n: int, c: int, k: int) -> None:
    if not (0 <= c <= n and 1 <= k <= n):
        raise ConfigError(f"need 0 <= c <= n and 1 <= k <= n, got n={n}, c={c}, k={k}")


@dataclass(frozen=True, slots=True, kw_only=True)
class PassAt:
    """pass@1 / pass^k / pass@k off the same groups; prints as one line."""

    pass_at_1: float | None
    pass_pow_k: float | None
    pass_at_k: float | None
    k: int | None
    headroom: float | None
    ci95: tuple[float, float] | None
    pass_pow_k_ci95: tuple[float, float] | None
    pass_at_k_ci95: tuple[float, float] | None
    per_task: dict[str, float] = field(default_factory=dict)
    n_groups: int = 0
    n_rows: int = 0
    notes: tuple[str, ...] = ()

    def summary(self) -> str:
        """The one-line summary, for example ``pass@1 0.61 | pass^8 0.32 | ...``."""

        def fmt(x: float | None) -> str:
            return "n/a" if x is None else f"{x:.2f}"

        kk = "k" if self.k is None or self.pass_at_k is None else str(self.k)
        line = (
            f"pass@1 {fmt(self.pass_at_1)} | pass^{kk} {fmt(self.pass_pow_k)} | "
            f"pass@{kk} {fmt(self.pass_at_k)} | headroom {fmt(self.headroom)} "
            f"({self.n_groups} groups, k={self.k if self.k is not None else 0})"
        )
        return line

    def __str__(self) -> str:
        return self.summary()

    def __repr__(self) -> str:
        return f"PassAt({self.summary()})"

    def to_dict(self) -> dict[str, Any]:
        """A JSON-able dict of every field."""
        return {
            "pass_at_1": self.pass_at_1,
            "pass_pow_k": self.pass_pow_k,
            "pass_at_k": self.pass_at_k,
            "k": self.k,
            "headroom": self.headroom,
            "ci95": self.ci95,
            "pass_pow_k_ci95": self.pass_pow_k_ci95,
            "pass_at_k_ci95": self.pass_at_k_ci95,
            "per_task": dict(self.per_task),
            "n_groups": self.n_groups,
            "n_rows": self.n_rows,
            "notes": list(self.notes),
        }


def group_outcomes(
    rows: list[dict[str, Any]], *, threshold: float = 0.5
) -> tuple[dict[str, list[int]], dict[str, str], dict[str, int]]:
    """Group judged rows by task; return (task -> 0/1 outcomes, task -> prompt, skipped counts).

    >>> groups, _, skipped = group_outcomes([{"prompt": "p", "reward": 1}, {"prompt": "p"}])
    >>> groups, skipped["unjudged"]
    ({'p': [1]}, 1)
    """
    groups: dict[str, list[int]] = {}
    prompts: dict[str, str] = {}
    skipped = {"unjudged": 0, "invalid": 0, "bool": 0, "no_task": 0}
    for row in rows:
        reward, how = read_reward(row)
        if reward is None:
            skipped[how] += 1
            continue
        if how == "bool":
            skipped["bool"] += 1
        key = task_key(row)
        if key is None:
            skipped["no_task"] += 1
            continue
        groups.setdefault(key, []).append(1 if reward >= threshold else 0)
        prompt = row.get("prompt")
        prompts.setdefault(key, prompt if isinstance(prompt, str) and prompt else key)
    return groups, prompts, skipped


def early_stops(rows: list[dict[str, Any]]) -> tuple[dict[str, int], set[str]]:
    """``(task -> the k its run aimed at, for tasks stopped early as unanimous; cut tasks)``.

    >>> early_stops([{"prompt": "p", "early_stop": {"after": 2, "k": 8}},
    ...              {"prompt": "q", "group_cut": True}])
    ({'p': 8}, {'q'})
    """
    stops: dict[str, int] = {}
    cut: set[str] = set()
    for row in rows:
        stop = row.get("early_stop")
        target = stop.get("k") if isinstance(stop, dict) else None
        if not (isinstance(target, int) and not isinstance(target, bool)) and not row.get(
                "group_cut"):
            continue
        key = task_key(row)
        if key is None:
            continue
        if isinstance(target, int) and not isinstance(target, bool):
            stops[key] = max(stops.get(key, 0), target)
        if row.get("group_cut"):
            cut.add(key)
    return stops, cut


def _at_run_k(groups: dict[str, list[int]], stops: dict[str, int], cut: set[str]
              ) -> tuple[dict[str, tuple[int, int]], list[str]]:
    """``(task -> (n, c) for the k-way numbers, notes)``: tasks left out have no entry."""
    counts = {t: (len(v), sum(v)) for t, v in groups.items()}
    lifted: list[int] = []
    split: list[str] = []
    for task, target in stops.items():
        n, c = counts.get(task, (target, 0))
        if n >= target:
            continue
        if c in (0, n):
            counts[task] = (target, target if c else 0)
            lifted.append(n)
        else:
            split.append(task)
    short = [t for t in cut if t in counts and t not in stops]
    notes = []
    if lifted:
        notes.append(f"{len(lifted)} groups stopped early as unanimous (after {min(lifted)}-"
                     f"{max(lifted)} rollouts) count as unanimous at the run's k")
    if split:
        notes.append(f"{len(split)} groups stopped early split once graded: left out of pass^k "
                     "and pass@k (their later rollouts were never run)")
    if short:
        notes.append(f"{len(short)} groups cut short by the run's budget or clock: left out of "
                     "pass^k and pass@k")
    for task in (*split, *short):
        del counts[task]
    return counts, notes


def _skip_notes(skipped: dict[str, int]) -> list[str]:
    notes = []
    if skipped["unjudged"]:
        notes.append(f"{skipped['unjudged']} unjudged rows (reward None) excluded")
    if skipped["invalid"]:
        notes.append(
            f"{skipped['invalid']} rows with an invalid reward (NaN, non-number or outside "
            "[0, 1]) excluded; re-run the judge or pass scale= to run_judge"
        )
    if skipped["bool"]:
        notes.append(f"{skipped['bool']} rows had a bool reward, read as 0/1")
    if skipped["no_task"]:
        notes.append(
            f"{skipped['no_task']} rows have no scenario_id, task_id or prompt and were excluded"
        )
    return notes


@valid_kwargs
def pass_at(
    rows: Any,
    *,
    threshold: float = 0.5,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> PassAt:
    """Return pass@1, pass^k and pass@k (with intervals) for graded rows.

    Args:
        rows: graded rows, a run object, or a JSONL path.
        threshold: reward at or above which a rollout passes.
        n_resamples: bootstrap replicates for the intervals (``resample`` kernel).
        seed: the bootstrap's seed.

    Unjudged, invalid and task-less rows are excluded and counted in ``notes``; an empty input
    gives a ``PassAt`` of ``None`` numbers with a note, not an error.

    >>> rows = [{"task_id": t, "reward": r} for t in "abc" for r in (1, 0, 1, 1)]
    >>> print(pass_at(rows, n_resamples=100))
    pass@1 0.75 | pass^4 0.00 | pass@4 1.00 | headroom 0.25 (3 groups, k=4)
    """
    row_list = as_rows(rows)
    groups, prompts, skipped = group_outcomes(row_list, threshold=threshold)
    notes = _skip_notes(skipped)
    n_rows = sum(len(v) for v in groups.values())
    if not groups:
        notes.append("no judged rows: nothing to measure")
        return PassAt(
            pass_at_1=None, pass_pow_k=None, pass_at_k=None, k=None, headroom=None, ci95=None,
            pass_pow_k_ci95=None, pass_at_k_ci95=None, per_task={}, n_groups=0, n_rows=0,
            notes=tuple(notes),
        )
    keys = list(groups)
    rates = [sum(groups[key]) / len(groups[key]) for key in keys]
    per_task: dict[str, float] = {}
    for key, rate in zip(keys, rates, strict=True):
        label = prompts[key]
        if label in per_task:
            label = f"{label} [{key}]"
        per_task[label] = rate
    p1 = mean(rates)
    ci = bootstrap_ci(rates, n_resamples=n_resamples, seed=seed)
    if ci is None:
        notes.append("one task only: no interval on pass@1")
    counts, stop_notes = _at_run_k(groups, *early_stops(row_list))
    notes.extend(stop_notes)
    kway = [t for t in keys if t in counts]
    k = min(counts[t][0] for t in kway) if kway else min(len(v) for v in groups.values())
    pow_k = at_k = headroom = None
    pow_ci = at_ci = None
    if k < MIN_K or not kway:
        notes.append(
            f"smallest group has {k} repeats: pass^k and pass@k need {MIN_K}+ repeats per task"
        )
    else:
        pows = [pass_pow_k_estimate(*counts[t], k) for t in kway]
        ats = [pass_at_k_estimate(*counts[t], k) for t in kway]
        pow_k, at_k = mean(pows), mean(ats)
        headroom = at_k - p1
        if len(kway) >= MIN_GROUPS_FOR_CI:
            pow_ci = bootstrap_ci(pows, n_resamples=n_resamples, seed=seed + 1)
            at_ci = bootstrap_ci(ats, n_resamples=n_resamples, seed=seed + 2)
        else:
            notes.append(f"{len(kway)} groups: k-way intervals need {MIN_GROUPS_FOR_CI}+")
    return PassAt(
        pass_at_1=p1, pass_pow_k=pow_k, pass_at_k=at_k, k=k, headroom=headroom, ci95=ci,
        pass_pow_k_ci95=pow_ci, pass_at_k_ci95=at_ci, per_task=per_task, n_groups=len(keys),
        n_rows=n_rows, notes=tuple(notes),
    )
