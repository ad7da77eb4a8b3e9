"""``ScoredData``: the graded copies a judge returns, with the views a user reads off them.

>>> scored = ScoredData(rows=[{"prompt": "p", "reward": 1.0, "judge_status": "ok"}])
>>> scored
ScoredData(1 rows: 1 pass, 0 fail, 0 partial, 0 unjudged)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from os import PathLike
from pathlib import Path
from typing import Any

from whileai.rows.jsonl_write import write_jsonl
from whileai.rows.outbound import export_row
from whileai.rows.source import read_reward
from whileai.simulations.judge.trust import judge_agreement
from whileai.simulations.measure.passat import PassAt, pass_at
from whileai.simulations.pushable import Pushable

__all__ = ["ScoredData", "status_counts"]

_STATUSES = ("ok", "missing_reward", "invalid_result", "error", "timeout")


def status_counts(rows: list[dict[str, Any]]) -> dict[str, int]:
    """Count rows per ``judge_status`` (rows never judged count as ``ungraded``).

    >>> status_counts([{"judge_status": "ok"}, {}])
    {'ok': 1, 'missing_reward': 0, 'invalid_result': 0, 'error': 0, 'timeout': 0, 'ungraded': 1}
    """
    counts = dict.fromkeys((*_STATUSES, "ungraded"), 0)
    for row in rows:
        status = row.get("judge_status")
        counts[status if status in counts else "ungraded"] += 1
    return counts


@dataclass(frozen=True, slots=True, kw_only=True)
class ScoredData(Pushable):
    """Graded row copies plus who graded them; the run they came from is untouched."""

    rows: list[dict[str, Any]] = field(default_factory=list)
    judge_name: str | None = None
    version: str | None = None
    source: str = "grade"

    def __len__(self) -> int:
        return len(self.rows)

    def __iter__(self) -> Any:
        return iter(self.rows)

    @property
    def trajectories(self) -> list[dict[str, Any]]:
        """The graded rows (the same list as ``rows``), for APIs that read a run."""
        return self.rows

    def _where(self, test: Any) -> list[dict[str, Any]]:
        out = []
        for row in self.rows:
            reward, _ = read_reward(row)
            if test(reward):
                out.append(row)
        return out

    def passes(self) -> list[dict[str, Any]]:
        """Rows with a full pass (reward 1.0)."""
        return self._where(lambda r: r is not None and r >= 1.0)

    def failures(self) -> list[dict[str, Any]]:
        """Rows with reward 0.0."""
        return self._where(lambda r: r is not None and r <= 0.0)

    def partials(self) -> list[dict[str, Any]]:
        """Rows with partial credit (0 < reward < 1)."""
        return self._where(lambda r: r is not None and 0.0 < r < 1.0)

    def unjudged(self) -> list[dict[str, Any]]:
        """Rows without a usable reward (judge failed, timed out, or never ran)."""
        return self._where(lambda r: r is None)

    def failed_traces(self) -> list[dict[str, Any]]:
        """Rows that did not fully pass (failures and partials), for ``simulate(traces=...)``."""
        return self._where(lambda r: r is not None and r < 1.0)

    @property
    def pass_at(self) -> PassAt:
        """pass@1 / pass^k / pass@k over these rows."""
        return pass_at(self.rows)

    def statuses(self) -> dict[str, int]:
        """Rows per ``judge_status``."""
        return status_counts(self.rows)

    def report(self) -> dict[str, Any]:
        """What the grading did: rows per status, coerced bool rewards, dropped markers, notes.

        >>> ScoredData(rows=[{"judge_status": "timeout", "reward": None}]).report()["notes"]
        ['1 rows timed out: reward None (raise timeout= or fix the judge)']
        """
        counts = status_counts(self.rows)
        coerced = sum(1 for r in self.rows if (r.get("judge_meta") or {}).get("coerced"))
        dropped = sum(
            len((r.get("judge_meta") or {}).get("dropped_markers") or []) for r in self.rows
        )
        notes = []
        hints = {
            "missing_reward": "returned no reward",
            "invalid_result": "returned an unusable reward",
            "error": "raised in the judge",
            "timeout": "timed out",
        }
        for status, what in hints.items():
            if counts[status]:
                fix = " (raise timeout= or fix the judge)" if status == "timeout" else ""
                notes.append(f"{counts[status]} rows {what}: reward None{fix}")
        if coerced:
            notes.append(f"{coerced} bool rewards read as 0/1")
        if dropped:
            notes.append(f"{dropped} non-numeric marker values dropped")
        return {
            "rows": len(self.rows),
            "judge_name": self.judge_name,
            "version": self.version,
            "source": self.source,
            "judge_status": counts,
            "bool_rewards": coerced,
            "dropped_markers": dropped,
            "notes": notes,
        }

    def agreement(self, *, gold: Any = None, threshold: float = 0.5) -> dict[str, Any]:
        """Judge vs hand labels (``gold_reward``) or a second run ``gold``: see ``judge_agreement``.

        Args:
            gold: another scored run whose rewards are the reference (default: ``gold_reward``).
            threshold: the reward at or above which a row counts as a pass.
        """

        report: dict[str, Any] = judge_agreement(self.rows, gold=gold, threshold=threshold)
        return report

    def save(self, path: str | PathLike[str], *, keep_privileged: bool = False) -> Path:
        """Write the graded rows as JSONL, as they may leave the run (``rows.export_row``: no
        ``privileged`` block unless ``keep_privileged=True``, for a private file); return the
        path."""
        target = Path(path)
        write_jsonl(target, (export_row(r, keep_privileged=keep_privileged) for r in self.rows),
                    keep_privileged=keep_privileged)
        return target

    def summary(self) -> str:
        """One line: row counts by outcome and the judge."""
        n_pass, n_fail = len(self.passes()), len(self.failures())
        n_part, n_un = len(self.partials()), len(self.unjudged())
        judge = f"; judge={self.judge_name}" if self.judge_name else ""
        return (
            f"{len(self.rows)} rows: {n_pass} pass, {n_fail} fail, {n_part} partial, "
            f"{n_un} unjudged{judge}"
        )

    def __repr__(self) -> str:
        return f"ScoredData({self.summary()})"

    __str__ = __repr__
