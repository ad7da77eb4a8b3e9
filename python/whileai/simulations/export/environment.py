"""RL environments: the tasks, the world and the reward the rows came from, as a package.

``build_tasks`` turns rows into one task per prompt (the ask as a chat prompt, the cell's
fault plan, world state, privileged reference and calibration in ``info``);
``export_environment`` writes them as an installable package with ``spec.json`` and a README
stating the gate; ``load_environment`` builds it with the installed ``verifiers``.

>>> tasks = build_tasks([{"scenario_id": "sc-0000000001", "prompt": "Refund 7459",
...                       "privileged": {"reference": "refund it"}, "reward": 1.0}])
>>> tasks[0]["prompt"], tasks[0]["info"]["privileged"]
([{'role': 'user', 'content': 'Refund 7459'}], {'reference': 'refund it'})
"""

from __future__ import annotations

import copy
import importlib
import json
import re
import warnings
from collections.abc import Callable, Mapping, Sequence
from os import PathLike
from pathlib import Path
from typing import Any, Literal

from whileai import _backend
from whileai.errors import ConfigError, SpecError
from whileai.rows.jsonl_write import write_jsonl
from whileai.rows.keywords import valid_kwargs
from whileai.rows.outbound import scrub, task_key
from whileai.rows.source import as_rows, read_reward
from whileai.simulations.clean.decontam import decontaminate
from whileai.simulations.export.checklist import has_cell_metadata
from whileai.simulations.export.reference import reference_of
from whileai.simulations.export.template import render_backend, render_module, render_pyproject
from whileai.simulations.export.wire import tool_schemas
from whileai.simulations.selection.gate import calibrate
from whileai.simulations.selection.hygiene import DEFAULT_BAND, check_band

__all__ = [
    "DEFAULT_REWARD",
    "DEFAULT_WORLD",
    "build_tasks",
    "export_environment",
    "format_environment_report",
    "load_environment",
]

DEFAULT_REWARD = "whileai.simulations.export.checklist:task_checklist"
DEFAULT_WORLD = "whileai.simulations.world:world"
_INFO_KEYS = ("scenario_id", "task_id", "scenario_dimensions", "world_state", "faults")


def _calibrations(rows: list[dict[str, Any]]) -> dict[str, Any]:
    graded = [r for r in rows if read_reward(r)[0] is not None or r.get("calibration")]
    stamps: dict[str, Any] = {}
    for row in calibrate(graded) if graded else []:
        key = task_key(row)
        if row.get("calibration") is not None:
            stamps.setdefault(key, row["calibration"])
    return stamps


def build_tasks(rows: Any) -> list[dict[str, Any]]:
    """One task per prompt: ``{"id", "prompt" (chat), "info"}`` with the row's cell in ``info``.

    ``info`` holds the scenario id, ``scenario_dimensions``, ``world_state``, ``faults``, the
    privileged ``reference`` (read by the reward on the server, never shown in the prompt),
    ``calibration`` when the rows were graded, and ``rollouts`` (rows seen for the task).

    >>> len(build_tasks([{"prompt": "a"}, {"prompt": "a"}, {"prompt": "b"}]))
    2
    """
    items = as_rows(rows)
    stamps = _calibrations(items)
    tasks: dict[str, dict[str, Any]] = {}
    for index, row in enumerate(items):
        key = task_key(row, where=f"rows[{index}]")
        if key in tasks:
            tasks[key]["info"]["rollouts"] += 1
            continue
        prompt = row.get("prompt")
        if not isinstance(prompt, str) or not prompt:
            raise SpecError(f"rows[{index}] ({key}): a task needs the ask in `prompt`; this row "
                            "has none. Export rows from simulate() or set `prompt`.")
        clean = scrub({k: row[k] for k in _INFO_KEYS if k in row})
        info: dict[str, Any] = {**clean, "rollouts": 1}
        privileged = row.get("privileged")
        if isinstance(privileged, Mapping) and privileged.get("reference") is not None:
            info["privileged"] = {"reference": copy.deepcopy(privileged["reference"])}
        if key in stamps:
            info["calibration"] = copy.deepcopy(stamps[key])
        tasks[key] = {"id": key, "prompt": [{"role": "user", "content": prompt}], "info": info}
    return list(tasks.values())


def _band_filter(tasks: list[dict[str, Any]], band: tuple[float, float] | None,
                 report: dict[str, Any]) -> list[dict[str, Any]]:
    kept = []
    for task in tasks:
        cal = task["info"].get("calibration")
        rate = cal.get("pass_rate") if isinstance(cal, Mapping) else None
        if rate is None:
            report["ungraded"] += 1
        elif not isinstance(cal.get("k"), int) or cal["k"] < 2:  # one rollout measures nothing
            report["unmeasured"] += 1
        else:
            report["graded_mixed"] += int(0.0 < rate < 1.0)
            if band is not None and rate < band[0]:
                report["band_dropped"]["too_hard"] += 1
                continue
            if band is not None and rate > band[1]:
                report["band_dropped"]["too_easy"] += 1
                continue
        kept.append(task)
    return kept


def _split(tasks: list[dict[str, Any]], holdout: float, seed: int) -> tuple[list[Any], list[Any]]:
    """Whole tasks (scenarios) to holdout by a stable hash of their id; never an empty train."""
    if not 0.0 <= holdout < 1.0:
        raise ConfigError(f"export_environment: holdout must be in [0, 1), got {holdout}")
    order = sorted(range(len(tasks)), key=lambda i: _backend.hash64(f"{seed}:{tasks[i]['id']}"))
    n_hold = min(round(holdout * len(tasks)), max(len(tasks) - 1, 0))
    held = set(order[:n_hold])
    return ([t for i, t in enumerate(tasks) if i not in held],
            [t for i, t in enumerate(tasks) if i in held])


def _module_name(path: Path, name: str | None) -> str:
    raw = name or path.name
    module = re.sub(r"\W+", "_", raw.replace("-", "_")).strip("_").lower()
    if not module or module[0].isdigit():
        raise SpecError(f"export_environment: cannot make a Python package name from {raw!r}; "
                        "pass name='my_env'")
    return module


def _readme(module: str, spec: dict[str, Any], report: dict[str, Any]) -> str:
    band = report["band"]
    dropped = report["band_dropped"]
    decon = report["decontamination"]
    return "\n".join([
        f"# {module}", "",
        "An RL environment exported by whileai: the tasks an agent was simulated on, the mock "
        "world that answers its tool calls, and the reward that grades a finished trajectory.",
        "", "```bash", "pip install -e .", f'python -c "import {module}; '
        f'env = {module}.load_environment(split=\'holdout\')"', "```", "",
        "## Gate", "",
        f"- Difficulty band: {'none' if band is None else f'pass rate {band[0]} to {band[1]}'}"
        f" on graded tasks; dropped {dropped['too_easy']} too easy, {dropped['too_hard']} too "
        f"hard; {report['graded_mixed']} graded tasks carry an advantage (mixed outcomes); "
        f"{report['ungraded']} tasks were ungraded and {report['unmeasured']} had a single "
        "graded rollout (no pass rate to band); both kept.",
        f"- Split by scenario: {report['train']} train tasks, {report['holdout']} holdout tasks "
        f"(holdout fraction {report['holdout_fraction']}); no scenario is in both.",
        f"- Decontamination of train against holdout (word {decon['n']}-grams, overlap "
        f"{decon['overlap']}): {decon['dropped']} train tasks dropped.",
        f"- Reward: `{spec['reward']}`; world: `{spec['world']}`; turn cap: {spec['max_turns']}.",
        "", "Privileged references are in each task's `info`, for the reward only; they are never "
        "part of the prompt.", ""])


@valid_kwargs
def export_environment(
    data_or_rows: Any,
    path: str | PathLike[str],
    *,
    reward: str | Callable[..., Any] | None = None,
    world: str | Callable[..., Any] | None = None,
    holdout: float = 0.2,
    system_prompt: str | None = None,
    tools: Sequence[Mapping[str, Any]] | None = None,
    max_turns: int = 10,
    band: tuple[float, float] | None = DEFAULT_BAND,
    seed: int = 0,
    name: str | None = None,
) -> dict[str, Any]:
    """Write an installable environment package at ``path``; return the report.

    Args:
        data_or_rows: a run (``SimulationData``) or rows.
        path: the package folder (its name, with ``-`` as ``_``, is the module name).
        reward: a module-level callable or ``"module:attr"`` (default ``task_checklist``).
        world: ``"module:attr"`` of the world factory (default the mock world).
        holdout: fraction of scenarios held out (default 0.2).
        system_prompt: the agent's system prompt (default: the run's, else the rows' leading
            system message).
        tools: the tool schemas (default: the run's).
        max_turns: the turn cap.
        band: the pass-rate band applied to graded tasks (None keeps all).
        seed: the split seed.
        name: the module name (default: from the folder name).

    Returns:
        The report: task counts per split, ``band_dropped``, ``decontamination``,
        ``warnings``; print with ``format_environment_report``.

    Raises:
        TypeError: an unknown keyword (the valid ones are listed).
        SpecError: ``reward``/``world`` has no importable address, or a row has no ask.
        ConfigError: ``holdout`` is outside [0, 1), or ``band`` is not ``(low, high)`` with
            0 <= low <= high <= 1.

    >>> import tempfile, os
    >>> report = export_environment([{"prompt": "hi"}], os.path.join(tempfile.mkdtemp(), "e"),
    ...     system_prompt="Help.", tools=[], holdout=0.0)  # doctest: +SKIP
    """
    if system_prompt is None:
        system_prompt = getattr(data_or_rows, "system_prompt", None)
    if tools is None:
        tools = getattr(data_or_rows, "tools", None)
    reward_ref = reference_of(reward or DEFAULT_REWARD, "reward")
    world_ref = reference_of(world or DEFAULT_WORLD, "world")
    holdout = float(holdout)
    bounds = check_band(band) if band else None
    rows = as_rows(data_or_rows)
    if system_prompt is None:  # a graded run keeps the chat: its leading system message
        first = next((r["messages"][0] for r in rows if isinstance(r.get("messages"), list)
                      and r["messages"]), None)
        if isinstance(first, Mapping) and first.get("role") == "system":
            system_prompt = first.get("content")
    target = Path(path)
    module = _module_name(target, name)
    report: dict[str, Any] = {
        "path": str(target), "module": module, "rows": len(rows), "tasks": 0, "train": 0,
        "holdout": 0, "holdout_fraction": holdout, "band": list(bounds) if bounds else None,
        "band_dropped": {"too_easy": 0, "too_hard": 0}, "graded_mixed": 0, "ungraded": 0,
        "unmeasured": 0,
        "with_cell_metadata": sum(has_cell_metadata(r) for r in rows), "warnings": []}
    tasks = build_tasks(rows)
    report["tasks"] = len(tasks)
    tasks = _band_filter(tasks, bounds, report)
    train, held = _split(tasks, holdout, int(seed))
    as_row = [{"prompt": t["prompt"][0]["content"], "task_id": t["id"]} for t in train]
    decon = {"n": 8, "overlap": 0.8, "dropped": 0}
    if held and train:
        clean, _ = decontaminate(as_row, [{"prompt": t["prompt"][0]["content"]} for t in held],
                                 progress=False)
        keep = {r["task_id"] for r in clean}
        decon["dropped"] = len(train) - len(keep)
        train = [t for t in train if t["id"] in keep]
    report.update(train=len(train), holdout=len(held), decontamination=decon)
    if not train:
        report["warnings"].append("export_environment: the train split is empty; lower the band, "
                                  "pass band=None, or simulate more repeats per task")
    if reward_ref == DEFAULT_REWARD and rows and not report["with_cell_metadata"]:
        message = ("export_environment: no row carries scenario_dimensions, so task_checklist "
                   "reduces to conduct_grade, a process reward; a policy trained on it alone "
                   "learns to call nothing. Export rows from simulate() or pass reward=.")
        report["warnings"].append(message)
        warnings.warn(message, UserWarning, stacklevel=2)
    if not tool_schemas(tools):
        message = ("export_environment: no tool schemas (rows do not carry them); pass tools= "
                   "or the SimulationData itself, or the environment offers the policy no tools")
        report["warnings"].append(message)
        warnings.warn(message, UserWarning, stacklevel=2)
    spec = {"name": module, "system_prompt": system_prompt, "tools": tool_schemas(tools),
            "max_turns": int(max_turns), "reward": reward_ref,
            "world": world_ref, "splits": {"train": "data/train.jsonl",
                                           "holdout": "data/holdout.jsonl"}}
    package = target / module
    (package / "data").mkdir(parents=True, exist_ok=True)
    # the reward reads info.privileged.reference on the environment's server, never the prompt
    write_jsonl(package / "data" / "train.jsonl", train, keep_privileged=True)
    write_jsonl(package / "data" / "holdout.jsonl", held, keep_privileged=True)
    (package / "spec.json").write_text(json.dumps(spec, indent=2, ensure_ascii=False) + "\n")
    (package / "__init__.py").write_text(render_module(module))
    (target / "pyproject.toml").write_text(render_pyproject(module.replace("_", "-"), module))
    (target / "whileai_build.py").write_text(render_backend(module.replace("_", "-"), module))
    (target / "README.md").write_text(_readme(module, spec, report))
    return report


def format_environment_report(report: Mapping[str, Any]) -> str:
    """Plain lines: tasks, split, band, decontamination, warnings.

    >>> print(format_environment_report({"path": "e", "module": "e", "rows": 2, "tasks": 1,
    ...     "train": 1, "holdout": 0, "band_dropped": {"too_easy": 0, "too_hard": 0},
    ...     "graded_mixed": 0, "ungraded": 1, "decontamination": {"dropped": 0},
    ...     "warnings": []}))
    environment e at e: 2 rows -> 1 tasks (1 train, 0 holdout)
    band dropped 0 too easy, 0 too hard; 0 graded mixed, 1 ungraded; decontamination dropped 0
    """
    lines = [f"environment {report['module']} at {report['path']}: {report['rows']} rows -> "
             f"{report['tasks']} tasks ({report['train']} train, {report['holdout']} holdout)",
             f"band dropped {report['band_dropped']['too_easy']} too easy, "
             f"{report['band_dropped']['too_hard']} too hard; {report['graded_mixed']} graded "
             f"mixed, {report['ungraded']} ungraded; decontamination dropped "
             f"{report['decontamination']['dropped']}"]
    lines.extend(f"warning: {w}" for w in report["warnings"])
    return "\n".join(lines)


def _read_spec(spec: Any) -> tuple[dict[str, Any], Path | None]:
    if isinstance(spec, Mapping):
        return dict(spec), None
    path = Path(spec) if isinstance(spec, (str, PathLike)) else None
    if path is not None and not path.exists() and isinstance(spec, str):
        try:
            module = importlib.import_module(spec.replace("-", "_"))
        except ImportError:
            module = None
        found = getattr(module, "SPEC_PATH", None)
        path = Path(found) if found is not None else path
    if path is not None and path.is_dir():
        nested = list(path.glob("*/spec.json"))
        path = path / "spec.json" if (path / "spec.json").exists() else (
            nested[0] if len(nested) == 1 else path / "spec.json")
    if path is None or not path.is_file():
        raise SpecError(f"load_environment: no spec.json found from {spec!r}; pass the folder "
                        "export_environment wrote, its spec.json, or the installed package name")
    return json.loads(path.read_text()), path


@valid_kwargs
def load_environment(
    spec: Any,
    *,
    split: Literal["train", "holdout"] = "train",
    execute: str | Callable[..., Any] | None = None,
    reward: str | Callable[..., Any] | None = None,
    world: str | Callable[..., Any] | None = None,
    env_config: Mapping[str, Any] | None = None,
) -> Any:
    """Build the exported environment with the installed ``verifiers`` (``whileai[rl]``).

    Args:
        spec: the folder ``export_environment`` wrote, its ``spec.json``, the installed package
            name, or the spec dict.
        split: ``"train"`` (default) or ``"holdout"``.
        execute: ``"module:attr"`` (or a module-level callable) answering ``(tool, arguments)``
            instead of the mock world.
        reward: overrides the spec's reward reference.
        world: overrides the spec's world reference.
        env_config: extra ``verifiers`` EnvConfig fields (harness, ...).

    Returns:
        A ``verifiers`` environment: the installed release's ``Env`` over this package's
        taskset when the package is importable, else the taskset itself.

    Raises:
        TypeError: an unknown keyword (the valid ones are listed).
        ImportError: ``verifiers`` is not installed (``pip install 'whileai[rl]'``).
        SpecError: no ``spec.json`` found from ``spec``.
    """
    try:
        importlib.import_module("verifiers.v1")
    except ImportError as exc:
        raise ImportError(
            "load_environment needs the `verifiers` package (>= 0.4): "
            "pip install 'whileai[rl]'") from exc
    # optional extra: vf_env imports `verifiers` at its top
    from whileai.simulations.export.vf_env import build_environment

    data, path = _read_spec(spec)
    for key, value in (("execute", execute), ("reward", reward), ("world", world)):
        if value is not None:
            data[key] = reference_of(value, key)
    return build_environment(data, path, split=split, env_config=env_config)
