"""Before/after: did training move the target, and did anything it must not break drop?

``delta_report`` runs ``compare_runs`` on pass@1 and on every marker both runs carry. Markers
follow one polarity (1.0 = good), so a significant drop is a regression. ``eval_variance`` measures
how much re-running the same eval moves a number on its own; passed as ``run_std=`` it turns any
delta inside twice that band into ``within_noise``.

>>> before = [{"task_id": str(i), "reward": 0} for i in range(6)]
>>> after = [{"task_id": str(i), "reward": 1} for i in range(6)]
>>> delta_report(before, after, n_resamples=100)["headline"]
'moved_up'
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from whileai.errors import ConfigError
from whileai.rows.keywords import valid_kwargs
from whileai.rows.source import as_rows
from whileai.simulations.measure.compare import compare_runs, marker_names, task_values
from whileai.simulations.measure.stats import DEFAULT_RESAMPLES, mean, sample_std

__all__ = ["delta_report", "eval_variance", "format_delta_report"]

_DIRECTION = {"b_better": "up", "a_better": "down"}


def _bare(name: str) -> str:
    return name[len("marker:") :] if name.startswith("marker:") else name


def _metric_entry(cmp: dict[str, Any], run_std: float | None) -> dict[str, Any]:
    direction = _DIRECTION.get(cmp["verdict"], "flat")
    if cmp["verdict"] == "insufficient_data":
        direction = "insufficient_data"
    if run_std is not None and cmp["delta"] is not None and abs(cmp["delta"]) <= 2 * run_std:
        direction = "within_noise"
    return {
        "before": cmp["a"],
        "after": cmp["b"],
        "delta": cmp["delta"],
        "ci95": cmp["ci95"],
        "p_value": cmp["p_value"],
        "paired_share": cmp["paired_share"],
        "direction": direction,
        "note": cmp["note"],
    }


def _group_of(by: str | Callable[[dict[str, Any]], Any], row: dict[str, Any]) -> Any:
    if callable(by):
        return by(row)
    if by in row:
        return row[by]
    for holder in ("markers", "scenario_dimensions"):
        inner = row.get(holder) or {}
        if by in inner:
            return inner[by]
    return None


def _split(rows: list[dict[str, Any]], by: Any) -> dict[str, list[dict[str, Any]]]:
    groups: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        value = _group_of(by, row)
        groups.setdefault("(none)" if value is None else str(value), []).append(row)
    return groups


@valid_kwargs
def delta_report(
    before: Any,
    after: Any,
    *,
    target: str = "pass_at_1",
    must_not_regress: Iterable[str] = (),
    by: str | Callable[[dict[str, Any]], Any] | None = None,
    run_std: float | None = None,
    proxy: str | None = None,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> dict[str, Any]:
    """Compare ``after`` against ``before`` on pass@1 and every shared marker.

    Args:
        target: the metric training meant to move; it gives ``headline`` (``moved_up``,
            ``moved_down``, ``no_change``, ``within_eval_noise`` or ``insufficient_data``).
        must_not_regress: markers whose significant drop fails the report (``ok`` False).
        by: a row key, marker, scenario dimension or callable; the target is compared per group
            and ``groups_down`` lists groups whose target dropped significantly.
        run_std: the eval's re-run std (``eval_variance``); deltas within 2x are noise.
        proxy: the training reward's metric; proxy up while the target is not up fails.

    Raises:
        ConfigError: ``target`` (or ``proxy``) is not measured on either run.

    >>> r = delta_report([{"prompt": "a", "reward": 1}], [{"prompt": "a", "reward": 1}],
    ...                  n_resamples=10)
    >>> r["headline"], r["ok"]
    ('insufficient_data', True)
    """
    rows_before, rows_after = as_rows(before, what="before"), as_rows(after, what="after")
    shared_markers = sorted(set(marker_names(rows_before)) & set(marker_names(rows_after)))
    names = ["pass_at_1", *shared_markers]
    target_name = _bare(target)
    extra = [_bare(n) for n in (target, proxy) if n is not None]
    for name in extra:
        if name not in names and name != "reward":
            raise ConfigError(
                f"metric {name!r} is not measured on both runs; available: {names}. Markers "
                "come from the judge's {'markers': {...}} and must be on rows of both runs"
            )
        if name not in names:
            names.append(name)
    metrics: dict[str, dict[str, Any]] = {}
    for i, name in enumerate(names):
        metric = name if name in ("pass_at_1", "reward") else f"marker:{name}"
        cmp = compare_runs(
            rows_before, rows_after, metric=metric, n_resamples=n_resamples, seed=seed + i
        )
        metrics[name] = _metric_entry(cmp, run_std)
    failures: list[str] = []
    warnings: list[str] = []
    guarded = [_bare(n) for n in must_not_regress]
    for name in guarded:
        if name not in metrics:
            warnings.append(f"must_not_regress {name!r} is not measured on both runs")
        elif metrics[name]["direction"] == "down":
            failures.append(f"{name} regressed ({metrics[name]['delta']:+.3f})")
    for name, entry in metrics.items():
        if entry["direction"] == "down" and name not in guarded and name != target_name:
            warnings.append(f"{name} dropped significantly ({entry['delta']:+.3f})")
    direction = metrics[target_name]["direction"]
    headline = {
        "up": "moved_up",
        "down": "moved_down",
        "flat": "no_change",
        "within_noise": "within_eval_noise",
    }.get(direction, "insufficient_data")
    report: dict[str, Any] = {
        "target": target_name,
        "headline": headline,
        "metrics": metrics,
        "run_std": run_std,
        "groups": {},
        "groups_down": [],
    }
    if proxy is not None:
        proxy_dir = metrics[_bare(proxy)]["direction"]
        over = proxy_dir == "up" and direction != "up"
        report["proxy"] = {"metric": _bare(proxy), "direction": proxy_dir, "over_optimized": over}
        if over:
            failures.append(
                f"proxy {_bare(proxy)} rose while the target {target_name} did not: "
                "the run over-optimized its training reward"
            )
    if by is not None:
        target_metric = (
            target_name if target_name in ("pass_at_1", "reward") else (f"marker:{target_name}")
        )
        split_before, split_after = _split(rows_before, by), _split(rows_after, by)
        for g in sorted(set(split_before) & set(split_after)):
            cmp = compare_runs(
                split_before[g],
                split_after[g],
                metric=target_metric,
                n_resamples=n_resamples,
                seed=seed,
            )
            entry = _metric_entry(cmp, run_std)
            report["groups"][g] = entry
            if entry["direction"] == "down":
                report["groups_down"].append(g)
        if report["groups_down"]:
            warnings.append(
                f"{target_name} dropped significantly in group(s) {report['groups_down']}"
            )
    report["failures"] = failures
    report["warnings"] = warnings
    report["ok"] = not failures
    return report


def _fmt(x: float | None, signed: bool = False) -> str:
    if x is None:
        return "n/a"
    return f"{x:+.3f}" if signed else f"{x:.3f}"


def format_delta_report(report: dict[str, Any]) -> str:
    """One line per metric, then failures and warnings.

    >>> r = {"target": "pass_at_1", "headline": "no_change", "ok": True, "metrics": {},
    ...      "failures": [], "warnings": []}
    >>> format_delta_report(r).splitlines()[0]
    'target pass_at_1: no_change (ok)'
    """
    head = "ok" if report["ok"] else "FAILED"
    lines = [f"target {report['target']}: {report['headline']} ({head})"]
    for name, e in report["metrics"].items():
        ci = e.get("ci95")
        ci_text = f" [{ci[0]:+.3f}, {ci[1]:+.3f}]" if ci else ""
        mark = "*" if name == report["target"] else " "
        lines.append(
            f"{mark} {name:<28} {_fmt(e['before'])} -> {_fmt(e['after'])}  "
            f"{_fmt(e['delta'], True)}{ci_text}  {e['direction'].upper()}"
        )
    for g, e in report.get("groups", {}).items():
        lines.append(f"  group {g}: {_fmt(e['delta'], True)} {e['direction'].upper()}")
    lines += [f"FAIL: {msg}" for msg in report["failures"]]
    lines += [f"warning: {msg}" for msg in report["warnings"]]
    return "\n".join(lines)


@valid_kwargs
def eval_variance(*runs: Any, metric: str = "pass_at_1") -> dict[str, Any]:
    """Re-run standard deviation of one eval (three or more runs of the same model and tasks).

    ``stability`` is ``stable`` (run_std <= 0.01), ``moderate`` (<= 0.03) or ``noisy``.

    >>> eval_variance([{"prompt": "a", "reward": 1}], [{"prompt": "a", "reward": 0}])["run_std"]
    0.7071067811865476
    """
    values = []
    for i, run in enumerate(runs):
        per_task = task_values(as_rows(run, what=f"runs[{i}]"), metric)
        values.append(mean(list(per_task.values())) if per_task else None)
    measured = [v for v in values if v is not None]
    notes = []
    if len(measured) < len(values):
        notes.append(f"{len(values) - len(measured)} runs had no {metric} value")
    if len(measured) < 3:
        notes.append(f"{len(measured)} measured runs: three or more give a usable run_std")
    run_std = sample_std(measured) if len(measured) >= 2 else None
    if run_std is None:
        stability = "unknown"
    elif run_std <= 0.01:
        stability = "stable"
    elif run_std <= 0.03:
        stability = "moderate"
    else:
        stability = "noisy"
    return {
        "metric": metric,
        "runs": len(values),
        "values": values,
        "mean": mean(measured) if measured else None,
        "run_std": run_std,
        "spread": (max(measured) - min(measured)) if measured else None,
        "stability": stability,
        "notes": notes,
    }
