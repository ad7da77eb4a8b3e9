"""One frozen eval run several times (seeds): how much does the score move on its own?

``pass_at(rows).ci95`` sees which tasks were picked, not that the model is stochastic.
``benchmark_report(runs)`` reads several graded runs of the same eval: pass@1 per run, mean and
standard deviation across runs, spread, and the tasks whose outcome flips from run to run.

>>> runs = [[{"task_id": "a", "reward": r}, {"task_id": "b", "reward": 1}] for r in (0, 1, 1)]
>>> report = benchmark_report(runs, name="demo", n_resamples=20)
>>> report["flipping_tasks"]
['a']
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from whileai.errors import ConfigError
from whileai.rows.keywords import valid_kwargs
from whileai.rows.source import as_rows
from whileai.simulations.judge.judging import evaluate
from whileai.simulations.measure.compare import task_values
from whileai.simulations.measure.passat import pass_at
from whileai.simulations.measure.stats import DEFAULT_RESAMPLES, mean, sample_std

__all__ = ["benchmark_report", "format_benchmark", "run_benchmark"]


@valid_kwargs
def benchmark_report(
    runs: Iterable[Any],
    *,
    name: str | None = None,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> dict[str, Any]:
    """Summarise graded runs of one eval across seeds.

    Raises:
        ConfigError: no runs were given.
    """
    run_rows = [as_rows(run, what=f"runs[{i}]") for i, run in enumerate(runs)]
    if not run_rows:
        raise ConfigError("benchmark_report needs at least one graded run (a list of row lists)")
    results = [pass_at(rows, n_resamples=n_resamples, seed=seed) for rows in run_rows]
    scores = [r.pass_at_1 for r in results]
    measured = [s for s in scores if s is not None]
    per_run_tasks = [task_values(rows, "pass_at_1") for rows in run_rows]
    all_tasks = sorted(set().union(*per_run_tasks))
    flipping = []
    for task in all_tasks:
        seen = {v >= 0.5 for tv in per_run_tasks if (v := tv.get(task)) is not None}
        if len(seen) > 1:
            flipping.append(task)
    notes = []
    if len(measured) < 3:
        notes.append(f"{len(measured)} graded runs: three or more seeds give a usable SD")
    if len(measured) < len(scores):
        notes.append(f"{len(scores) - len(measured)} runs had no judged rows")
    sd = sample_std(measured) if len(measured) >= 2 else None
    return {
        "name": name,
        "n_runs": len(run_rows),
        "pass_at_1": scores,
        "ci95": [r.ci95 for r in results],
        "mean": mean(measured) if measured else None,
        "sd": sd,
        "spread": (max(measured) - min(measured)) if measured else None,
        "n_tasks": len(all_tasks),
        "flipping_tasks": flipping,
        "flip_rate": (len(flipping) / len(all_tasks)) if all_tasks else None,
        "notes": notes,
    }


def format_benchmark(report: dict[str, Any]) -> str:
    """A short scorecard for ``benchmark_report``.

    >>> print(format_benchmark({"name": None, "n_runs": 0, "mean": None, "sd": None,
    ...     "spread": None, "pass_at_1": [], "n_tasks": 0, "flipping_tasks": [],
    ...     "flip_rate": None, "notes": []}).splitlines()[0])
    benchmark: 0 runs, pass@1 mean n/a, sd n/a, spread n/a
    """

    def f(x: float | None) -> str:
        return "n/a" if x is None else f"{x:.3f}"

    title = report.get("name") or "benchmark"
    lines = [
        f"{title}: {report['n_runs']} runs, pass@1 mean {f(report['mean'])}, "
        f"sd {f(report['sd'])}, spread {f(report['spread'])}",
        "  per run: " + ", ".join(f(s) for s in report["pass_at_1"]),
        f"  {len(report['flipping_tasks'])} of {report['n_tasks']} tasks flip between runs"
        + (f" ({report['flip_rate']:.0%})" if report["flip_rate"] is not None else ""),
    ]
    lines += [f"  note: {n}" for n in report["notes"]]
    if "decontamination" in report:
        lines.append(f"  decontamination: {report['decontamination']}")
    return "\n".join(lines)


@valid_kwargs
def run_benchmark(
    eval_set: Any,
    *,
    judge: Callable[[Any], Any],
    rollout: Callable[[Any, int], Any],
    seeds: int | Iterable[int] = 5,
    name: str | None = None,
    decontaminate_against: Any = None,
    n_resamples: int = DEFAULT_RESAMPLES,
) -> dict[str, Any]:
    """Roll the eval once per seed (``rollout(eval_set, seed) -> rows``), grade, and report.

    Each run is graded with ``evaluate`` (lineage ``eval``). With ``decontaminate_against``
    (training rows) the eval prompts are checked for 8-gram overlap and the result is added.

    >>> report = run_benchmark([{"prompt": "a"}], judge=lambda r: 1,
    ...     rollout=lambda rows, seed: rows, seeds=2, n_resamples=10)
    >>> report["pass_at_1"]
    [1.0, 1.0]
    """
    seed_list = list(range(seeds)) if isinstance(seeds, int) else list(seeds)
    if not seed_list:
        raise ConfigError("seeds must be a positive int or a non-empty list of seeds")
    runs = [evaluate(rollout(eval_set, s), judge).rows for s in seed_list]
    report = benchmark_report(runs, name=name, n_resamples=n_resamples)
    report["seeds"] = seed_list
    if decontaminate_against is not None:
        try:
            from whileai.simulations.clean.decontam import decontaminate
        except ImportError:
            report["notes"].append("decontamination is not available in this build")
        else:
            _, decon = decontaminate(as_rows(eval_set), against=[decontaminate_against],
                                     progress=False)
            report["decontamination"] = decon
    return report
