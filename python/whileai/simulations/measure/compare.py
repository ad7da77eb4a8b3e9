"""Comparing two runs on one metric, and per-metric summaries with intervals.

A metric is read per task (``task_key``): ``pass_at_1`` is the task's pass rate, ``reward`` its
mean reward, and any other name (or ``marker:<name>``) the mean of ``row["markers"][name]``. Two
runs are compared over the tasks they share (paired); with fewer than ``MIN_PAIRED`` shared tasks
the comparison falls back to an unpaired test and says so in ``note``.

>>> a = [{"task_id": str(i), "reward": 0} for i in range(8)]
>>> b = [{"task_id": str(i), "reward": 1} for i in range(8)]
>>> compare_runs(a, b, n_resamples=200)["verdict"]
'b_better'
"""

from __future__ import annotations

import math
from typing import Any

from whileai.errors import ConfigError
from whileai.rows.keywords import valid_kwargs
from whileai.rows.source import as_rows, read_reward, task_key
from whileai.simulations.measure.stats import (
    DEFAULT_RESAMPLES,
    bootstrap_ci,
    mean,
    paired_difference,
    unpaired_difference,
)

__all__ = [
    "MIN_PAIRED",
    "compare_runs",
    "format_compare",
    "marker_names",
    "marker_summary",
    "metric_summary",
    "task_values",
]

MIN_PAIRED = 5
VERDICTS = ("b_better", "a_better", "no_difference_detected", "insufficient_data")


def _marker_name(metric: str) -> str | None:
    """None for the reward metrics, else the marker name (``marker:`` prefix stripped)."""
    if metric in ("pass_at_1", "pass", "reward"):
        return None
    return metric[len("marker:") :] if metric.startswith("marker:") else metric


@valid_kwargs
def task_values(
    rows: Any, metric: str = "pass_at_1", *, threshold: float = 0.5
) -> dict[str, float]:
    """Return ``{task: value}`` for one metric (rows without a value are skipped).

    >>> task_values([{"prompt": "p", "markers": {"grounded": 1}}, {"prompt": "p"}], "grounded")
    {'p': 1.0}
    """
    if not isinstance(metric, str) or not metric:
        raise ConfigError(f"metric must be a non-empty string, got {metric!r}")
    marker = _marker_name(metric)
    sums: dict[str, list[float]] = {}
    for row in as_rows(rows):
        key = task_key(row)
        if key is None:
            continue
        if marker is None:
            reward, _ = read_reward(row)
            if reward is None:
                continue
            value = (1.0 if reward >= threshold else 0.0) if metric != "reward" else reward
        else:
            raw = (row.get("markers") or {}).get(marker)
            if isinstance(raw, bool) or not isinstance(raw, (int, float)):
                continue
            if not math.isfinite(float(raw)):
                continue
            value = float(raw)
        sums.setdefault(key, []).append(value)
    return {key: mean(vals) for key, vals in sums.items()}


def marker_names(rows: Any) -> list[str]:
    """Sorted names of every numeric marker present on any row.

    >>> marker_names([{"markers": {"b": 1, "a": 0.5, "note": "x"}}])
    ['a', 'b']
    """
    names: set[str] = set()
    for row in as_rows(rows):
        for name, value in (row.get("markers") or {}).items():
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                names.add(str(name))
    return sorted(names)


def _verdict(ci: tuple[float, float] | None) -> str:
    if ci is None:
        return "insufficient_data"
    if ci[0] > 0:
        return "b_better"
    if ci[1] < 0:
        return "a_better"
    return "no_difference_detected"


@valid_kwargs
def compare_runs(
    a: Any,
    b: Any,
    *,
    metric: str = "pass_at_1",
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    threshold: float = 0.5,
) -> dict[str, Any]:
    """Compare run ``b`` against run ``a`` on one metric; ``delta`` is ``b - a``.

    Paired over shared tasks: a bootstrap interval on the mean paired difference and a sign-flip
    permutation p-value. Fewer than ``MIN_PAIRED`` shared tasks: an unpaired bootstrap interval
    and a Welch z p-value, said in ``note``. ``no_difference_detected`` means the interval covers
    zero, not that the runs are equal.

    >>> out = compare_runs([{"prompt": "x", "reward": 1}], [{"prompt": "x", "reward": 1}])
    >>> out["verdict"], out["paired"]
    ('insufficient_data', False)
    """
    va = task_values(a, metric, threshold=threshold)
    vb = task_values(b, metric, threshold=threshold)
    shared = [key for key in va if key in vb]
    union = len(set(va) | set(vb))
    report: dict[str, Any] = {
        "metric": metric,
        "n_a": len(va),
        "n_b": len(vb),
        "n_shared": len(shared),
        "paired_share": (len(shared) / union) if union else 0.0,
        "a": None,
        "b": None,
        "delta": None,
        "ci95": None,
        "p_value": None,
        "paired": False,
        "test": None,
    }
    notes = []
    if len(shared) >= MIN_PAIRED:
        diffs = [vb[key] - va[key] for key in shared]
        out = paired_difference(diffs, n_resamples=n_resamples, seed=seed)
        report.update(out)
        report["paired"] = True
        report["a"] = mean([va[key] for key in shared])
        report["b"] = mean([vb[key] for key in shared])
        dropped = union - len(shared)
        if dropped:
            notes.append(
                f"{dropped} of {union} tasks are on one side only and were left out of the "
                f"paired comparison ({report['paired_share']:.0%} paired)"
            )
    elif va and vb:
        xa, xb = list(va.values()), list(vb.values())
        out = unpaired_difference(xa, xb, n_resamples=n_resamples, seed=seed)
        report.update(out)
        report["a"], report["b"] = mean(xa), mean(xb)
        notes.append(
            f"only {len(shared)} shared tasks (need {MIN_PAIRED}): unpaired test over all "
            f"{len(xa)} vs {len(xb)} tasks; pin the task set (simulate(tasks=...)) to pair them"
        )
    else:
        side = "a" if not va else "b"
        notes.append(f"run {side} has no task with a {metric} value: nothing to compare")
    report["verdict"] = _verdict(report["ci95"])
    if report["verdict"] == "insufficient_data" and report["delta"] is not None:
        notes.append("too few tasks for an interval")
    report["note"] = "; ".join(notes)
    return report


def format_compare(report: dict[str, Any]) -> str:
    """One line: ``pass_at_1 0.52 -> 0.61 (+0.09 [+0.03, +0.15], p=0.004) b_better``.

    >>> format_compare({"metric": "reward", "verdict": "insufficient_data", "a": None})
    'reward: insufficient_data'
    """
    if report.get("a") is None or report.get("delta") is None:
        return f"{report['metric']}: {report['verdict']}"
    ci = report.get("ci95")
    ci_text = f" [{ci[0]:+.2f}, {ci[1]:+.2f}]" if ci else ""
    p = report.get("p_value")
    p_text = f", p={p:.3g}" if p is not None else ""
    return (
        f"{report['metric']} {report['a']:.2f} -> {report['b']:.2f} "
        f"({report['delta']:+.2f}{ci_text}{p_text}) {report['verdict']}"
    )


@valid_kwargs
def metric_summary(
    rows: Any,
    metric: str = "pass_at_1",
    *,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> dict[str, Any]:
    """Mean of a metric over tasks with a bootstrap 95% interval over tasks.

    >>> metric_summary([{"prompt": "a", "reward": 1}, {"prompt": "b", "reward": 0}],
    ...                n_resamples=50)["mean"]
    0.5
    """
    values = task_values(rows, metric)
    xs = list(values.values())
    return {
        "metric": metric,
        "mean": mean(xs) if xs else None,
        "ci95": bootstrap_ci(xs, n_resamples=n_resamples, seed=seed),
        "n_tasks": len(xs),
    }


@valid_kwargs
def marker_summary(
    rows: Any, *, n_resamples: int = DEFAULT_RESAMPLES, seed: int = 0
) -> dict[str, dict[str, Any]]:
    """``metric_summary`` for every marker on the rows, keyed by marker name.

    >>> marker_summary([{"prompt": "a", "markers": {"ok": 1.0}}])["ok"]["mean"]
    1.0
    """
    row_list = as_rows(rows)
    return {
        name: metric_summary(row_list, f"marker:{name}", n_resamples=n_resamples, seed=seed)
        for name in marker_names(row_list)
    }
