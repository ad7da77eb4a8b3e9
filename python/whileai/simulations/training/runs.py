"""Reading and amending runs after the fact: ``get_run``, ``attach_delta``, ``attach_holdout``,
``reward_model``, and the printers for runs and monitors.

A run is found in the local run folders first (``WHILEAI_HOME/runs``, or ``dir=``), then on the
configured platform. Amending a local run appends to its folder and uploads it when a platform
is configured.

>>> print(format_hack_monitor({"checks": [], "alarms": [], "stopped": False, "calls": 0,
...                            "every": 10, "stop_on": [], "endorsed": []}))
monitor: 0 checks over 0 reward calls (every 10); no alarm
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from whileai.errors import ConfigError
from whileai.simulations.judge.llm_judge import resolve_judge
from whileai.simulations.measure.delta import delta_report
from whileai.simulations.measure.stats import DEFAULT_RESAMPLES
from whileai.simulations.models.spec import local_model
from whileai.simulations.training.record import RunFolder, default_runs_dir
from whileai.simulations.training.run import TrainingRun, _rate, holdout_verdict, runs_in
from whileai.simulations.training.sender import upload_folder
from whileai.simulations.training.transport import configured_runs_transport

__all__ = ["attach_delta", "attach_holdout", "format_hack_monitor", "format_run", "get_run",
           "list_runs", "reward_model"]

Dir = str | os.PathLike[str] | None


def _folder(run: Any, directory: Dir) -> RunFolder | None:
    if isinstance(run, TrainingRun):
        return run.folder
    run_id = run.get("id") if isinstance(run, Mapping) else run
    if not isinstance(run_id, str) or not run_id:
        raise ConfigError(f"expected a run, a run id or get_run(...) output, got {run!r}")
    path = (Path(directory) if directory is not None else default_runs_dir()) / run_id
    return RunFolder(path) if (path / "run.json").is_file() else None


def _client() -> Any:
    return configured_runs_transport(required=False)


def get_run(run: Any, *, dir: Dir = None) -> dict[str, Any]:
    """A run's header with ``series`` (its points, oldest first) and ``events``.

    Raises:
        ConfigError: no local folder holds the run and no platform knows it.
    """
    folder = _folder(run, dir)
    if folder is not None:
        return {**folder.header, "series": list(folder.points()), "events": list(folder.events())}
    transport = _client()
    if transport is None:
        raise ConfigError(f"run {run!r}: no local run folder under "
                          f"{dir or default_runs_dir()} and no platform configured")
    found: dict[str, Any] = transport.get_run(str(run))
    return found


def list_runs(*, dir: Dir = None) -> list[dict[str, Any]]:
    """The local runs (headers with point counts), newest first."""
    return [{**f.header, "points": f.count("points")} for f in runs_in(dir)]


def _amend(run: Any, dir: Dir, kind: str, **fields: Any) -> RunFolder | None:
    """Append an event to the run's folder (returned), or send it to the server (None)."""
    folder = _folder(run, dir)
    if folder is None:
        transport = _client()
        if transport is None:
            raise ConfigError(f"run {run!r}: no local run folder and no platform configured")
        transport.log_events(str(run), [{"seq": None, "kind": kind, **fields}])
        return None
    folder.add_event(kind, **fields)
    return folder


def _upload(folder: RunFolder) -> None:
    transport = _client()
    if transport is not None:
        upload_folder(folder, transport)


def attach_holdout(run: Any, before: Any, after: Any, *, metric: str = "pass_rate",
                   dir: Dir = None) -> str:
    """Say how a finished run did on its holdout; returns Better / Worse / About the same."""
    if isinstance(run, TrainingRun):
        return run.holdout(before, after, metric=metric)
    b, a = _rate(before, "before"), _rate(after, "after")
    verdict = holdout_verdict(b, a, metric=metric)
    folder = _amend(run, dir, "holdout", before=b, after=a, metric=metric, verdict=verdict)
    if folder is None:
        return verdict
    folder.set_header(holdout_result={"before": b, "after": a, "metric": metric,
                                      "verdict": verdict})
    _upload(folder)
    return verdict


def attach_delta(run: Any, before: Any, after: Any, *, target: str = "pass_at_1",
                 must_not_regress: Iterable[str] = (), by: Any = None,
                 run_std: float | None = None, proxy: str | None = None,
                 n_resamples: int = DEFAULT_RESAMPLES, seed: int = 0,
                 dir: Dir = None) -> dict[str, Any]:
    """``delta_report(before, after)`` kept on a run that has already finished."""
    if isinstance(run, TrainingRun):
        return run.delta(before, after, target=target, must_not_regress=must_not_regress, by=by,
                         run_std=run_std, proxy=proxy, n_resamples=n_resamples, seed=seed)

    report = delta_report(before, after, target=target, must_not_regress=must_not_regress, by=by,
                          run_std=run_std, proxy=proxy, n_resamples=n_resamples, seed=seed)
    folder = _amend(run, dir, "delta", report=report)
    if folder is None:
        return report
    entry = report["metrics"].get(report["target"], {})
    if isinstance(entry.get("before"), (int, float)) and isinstance(entry.get("after"),
                                                                     (int, float)):
        attach_holdout(run, entry["before"], entry["after"], dir=dir)
    _upload(folder)
    return report


def reward_model(run: Any, *, threshold: float = 0.5, rubric: str | None = None,
                 dir: Dir = None) -> Callable[[Any], dict[str, Any]]:
    """The model a run served, as a judge: ``reward`` 0/1 against ``threshold``, ``rm_score`` raw.

    The run must record where its model is served: ``run.finish(summary={"served": {"url":
    "http://127.0.0.1:8000/v1", "model": "my-rm"}})`` (any OpenAI-compatible server, e.g. vLLM).

    Raises:
        ConfigError: the run records no served model.
    """
    info = run if isinstance(run, Mapping) else get_run(run, dir=dir)
    served = (info.get("summary") or {}).get("served") or info.get("served")
    if not isinstance(served, Mapping) or not served.get("url"):
        raise ConfigError(f"run {info.get('id')!r} records no served model: finish it with "
                          "summary={'served': {'url': ..., 'model': ...}}")

    judge = resolve_judge(local_model(str(served["url"]), model=served.get("model")),
                          rubric=rubric)
    if judge is None:  # resolve_judge gives None only without a spec; ours always has one
        raise ConfigError(f"run {info.get('id')!r}: no judge at {served['url']}")

    def scored(row: Any) -> dict[str, Any]:
        verdict = dict(judge(row))
        raw = verdict.get("reward")
        if isinstance(raw, (int, float)) and not isinstance(raw, bool):
            verdict["rm_score"] = float(raw)
            verdict["reward"] = 1.0 if raw >= threshold else 0.0
        return verdict

    scored.version = f"reward_model:{info.get('id')}"  # type: ignore[attr-defined]
    return scored


def format_run(run: Mapping[str, Any]) -> str:
    """A few lines on a run: status, points, last metrics, holdout verdict, alarms."""
    series = run.get("series") or []
    lines = [f"{run.get('id')}  {run.get('name')}  {run.get('status')}  "
             f"{len(series)} points"]
    if series:
        last = {k: v for k, v in series[-1].items() if k not in ("seq", "time")}
        lines.append("last: " + ", ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}"
                                          for k, v in last.items()))
    result = run.get("holdout_result")
    if result:
        lines.append(f"holdout: {result['verdict']} ({result['before']:.3g} -> "
                     f"{result['after']:.3g}, {result['metric']})")
    lines.extend(f"alarm at step {e.get('step')}: {e.get('name')}"
                 f"{' (stopped)' if e.get('stop') else ''}: {e.get('message')}"
                 for e in run.get("events") or [] if e.get("kind") == "alarm")
    return "\n".join(lines)


def format_hack_monitor(summary: Mapping[str, Any]) -> str:
    """Print a ``HackMonitor.summary()``: the proxy/gold curve and the alarms, one line each."""
    checks, alarms = summary.get("checks") or [], summary.get("alarms") or []
    head = (f"monitor: {len(checks)} checks over {summary.get('calls', 0)} reward calls "
            f"(every {summary.get('every')})")
    lines = [head + ("; no alarm" if not alarms else f"; {len(alarms)} alarm(s)")]
    for check in checks:
        parts = [f"step {check['step']:>6}"]
        for key, label in (("proxy_reward", "proxy"), ("gold_reward", "gold"),
                           ("completion_length", "len"), ("kl", "kl")):
            if isinstance(check.get(key), (int, float)):
                parts.append(f"{label} {check[key]:.3f}")
        if check.get("regime"):
            parts.append(f"scan {check['regime']}"
                         + (f" ({check['top_feature']})" if check.get("top_feature") else ""))
        lines.append("  " + "  ".join(parts))
    lines.extend(f"ALARM {a['name']} at step {a['step']}{' -> stop' if a['stop'] else ''}: "
                 f"{a['message']}" for a in alarms)
    if summary.get("stopped"):
        lines.append(f"stopped: {summary.get('stop_reason')}")
    return "\n".join(lines)
