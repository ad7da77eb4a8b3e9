"""What ``simulate()`` resolves before the engine runs: the plan (spec, grid, tasks to replay,
the traces' copy check) and the cast (ask writer, agent, world), each from the caller's keywords.

>>> TOOLS = [{"type": "function", "function": {"name": "get_order", "parameters": {
...     "type": "object", "properties": {"order_id": {"type": "string"}}}}}]
>>> plan = plan_run(None, TOOLS, "Help.", None, None, None, None, None)
>>> [t.name for t in plan.spec.tools], plan.tasks
(['get_order'], None)
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TypeAlias

from whileai.errors import ConfigError, SpecError
from whileai.platform.resolve import resolve_ids
from whileai.rows.jsonl import load_rows
from whileai.rows.outbound import task_key
from whileai.simulations.agent.spec import AgentSpec, agent_spec, inspect
from whileai.simulations.data import SimulationData
from whileai.simulations.generate.agents import (
    RolloutAgent,
    ToolWorld,
    is_model_spec,
    resolve_agent,
)
from whileai.simulations.generate.grid import Cell, build_grid
from whileai.simulations.generate.resolve import resolve_agent as resolve_model_agent
from whileai.simulations.generate.resolve import resolve_writer
from whileai.simulations.generate.situation import Situation, Writer
from whileai.simulations.generate.writer import TemplateWriter
from whileai.simulations.ingest.dimensions import dimensions_from_traces
from whileai.simulations.ingest.from_traces import SourceCopyCheck
from whileai.simulations.ingest.traces import load_traces
from whileai.simulations.models.spec import ModelSpec
from whileai.simulations.models.unconfigured import no_model_message
from whileai.simulations.play import grading
from whileai.simulations.play.config import RunConfig
from whileai.simulations.world.mock import World

__all__ = ["AgentArg", "Cast", "Grader", "Plan", "SimulatorArg", "TaskSource", "TraceSource",
           "cast_run", "close_owned", "pick_grader", "plan_run"]

# What simulate() accepts for the objects it resolves (the docstring says what each means).
AgentArg: TypeAlias = str | ModelSpec | RolloutAgent | Callable[..., Any] | None
SimulatorArg: TypeAlias = Literal[False] | str | ModelSpec | Writer | None
TaskSource: TypeAlias = SimulationData | str | Path | Sequence[Mapping[str, Any]] | None
TraceSource: TypeAlias = str | Path | Iterable[Mapping[str, Any]] | None
Grader: TypeAlias = Callable[[dict[str, Any]], Mapping[str, Any]]


class _ExecuteWorld:
    """The caller's ``execute(tool, arguments)`` as a world (no SDK faults)."""

    def __init__(self, execute: Callable[[str, dict[str, Any]], Any]) -> None:
        self.execute = execute

    def call(self, tool: str, arguments: Mapping[str, Any] | None = None) -> Any:
        return self.execute(tool, dict(arguments or {}))


def _resolve_writer(simulator: object, spec: AgentSpec, cfg: RunConfig,
                    warnings: list[str]) -> Writer:
    if simulator is False:
        return TemplateWriter(avg_turns=cfg.avg_turns, spec=spec)
    if simulator is not None and not is_model_spec(simulator):
        if isinstance(simulator, Writer):
            return simulator
        raise ConfigError(
            f"simulator must be False, None, a model spec string or a Writer; got "
            f"{type(simulator).__name__}"
        )
    writer = resolve_writer(simulator, tools=[t.to_openai() for t in spec.tools],
                                     avg_turns=cfg.avg_turns)
    if writer is None:
        if simulator is not None:
            raise ConfigError(f"simulator {simulator!r} did not resolve to a model writer")
        warnings.append(no_model_message("writer"))
        return TemplateWriter(avg_turns=cfg.avg_turns, spec=spec)
    resolved: Writer = writer
    return resolved


def _resolve_agent(agent: object, spec: AgentSpec, cfg: RunConfig, writer: Writer,
                   execute: Callable[..., Any] | None) -> RolloutAgent:
    """A model spec (or None: the configured model) goes through the backends; the rest
    through ``generate.agents.resolve_agent``. A model agent gets the writer for later turns."""
    if agent is None or is_model_spec(agent):
        model = resolve_model_agent(
            agent, tools=[t.to_openai() for t in spec.tools], system_prompt=spec.policy,
            logprobs=cfg.logprobs, avg_turns=cfg.avg_turns, execute=execute,
        )
        if model is None:
            resolve_agent(None)  # raises the "no agent" ConfigError
        agent = model
    resolved = resolve_agent(agent)
    if hasattr(resolved, "writer") and getattr(resolved, "writer", None) is None:
        resolved.writer = writer
    return resolved


def _load_tasks(tasks: object) -> tuple[tuple[Situation, ...], int]:
    """A previous run's tasks (its situations) and its k (rollouts per task)."""
    source = tasks.trajectories if isinstance(tasks, SimulationData) else resolve_ids(tasks)
    rows = load_rows(source)
    by_task: dict[str, list[dict[str, Any]]] = {}
    for i, row in enumerate(rows):
        by_task.setdefault(task_key(row, where=f"tasks[{i}]"), []).append(row)
    situations = []
    k = 1
    for key, group in by_task.items():
        row = group[0]
        k = max(k, len(group), 1 + max(int(r.get("rollout_index") or 0) for r in group))
        dims = row.get("scenario_dimensions") or {}
        world_state = row.get("world_state") or {}
        privileged = row.get("privileged") or {}
        values = tuple((a, str(v)) for a, v in dims.items() if isinstance(v, str | int))
        situations.append(Situation(
            scenario_id=str(row.get("scenario_id") or key),
            prompt=str(row.get("prompt") or ""),
            cell=Cell(values=values, block="tasks", clause=str(privileged.get("principle", ""))),
            visit=int(dims.get("visit", 0) or 0),
            phrasing=int(dims.get("phrasing", 0) or 0),
            seed=int(dims.get("seed", 0) or 0),
            world_state=world_state,
            faults=tuple(row.get("faults") or ()),
            hidden_state=str(privileged.get("hidden_state", "")),
            reference=str(privileged.get("reference", "")),
            principle=str(privileged.get("principle", "")),
            slots=dict(world_state.get("slots") or {}),
            tools=tuple(world_state.get("target_tools") or ()),
            answer=str(privileged.get("answer", "")),
        ))
    if not situations:
        raise SpecError("tasks= holds no rows: pass a previous run, its rows or its JSONL path")
    return tuple(situations), k


def _trace_dimensions(
    traces: object, spec: AgentSpec
) -> tuple[dict[str, Sequence[str]], list[str]]:
    """The grid axes the traces aim at, and the traces' asks (kept out of the rows)."""
    rows: list[Any] = list(load_traces(traces))
    dims: dict[str, Sequence[str]] = dict(dimensions_from_traces(
        rows, [t.to_openai() for t in spec.tools], spec.policy))
    asks = [str(r.get("prompt") or "") for r in rows if isinstance(r, Mapping)]
    return dims, asks


def _run_spec(agent: object, tools: Sequence[Mapping[str, Any]] | None, prompt: str | None,
              spec: str | Path | Mapping[str, Any] | None, rubric: str | None) -> AgentSpec:
    """The run's spec from the keywords, or from an agent object that carries its own tools and
    prompt when none of them is given."""
    if tools is None and prompt is None and spec is None and agent is not None \
            and not is_model_spec(agent):
        carried = inspect(agent)
        tools, prompt = carried["tools"] or None, carried["system_prompt"] or None
        if tools is None and prompt is None:
            who = getattr(agent, "__name__", None) or type(agent).__name__
            raise SpecError(
                f"simulate(agent={who}): the agent carries no tools and no system prompt, and "
                "none were passed. Pass them beside it (simulate(agent, tools=TOOLS, "
                f"system_prompt=POLICY)), or let the agent bring them: {who}.tools = TOOLS and "
                f"{who}.system_prompt = POLICY (or an object with those attributes)"
            )
    run_spec = agent_spec(tools=tools, system_prompt=prompt, spec=spec)
    if not rubric:
        return run_spec
    return AgentSpec(tools=run_spec.tools, policy=run_spec.policy,
                     situations=run_spec.situations, rubric=str(rubric), notes=run_spec.notes)


def pick_grader(grader: Callable[[dict[str, Any]], Mapping[str, Any]] | None, grade: bool,
            warnings: list[str]) -> Callable[[dict[str, Any]], Mapping[str, Any]] | None:
    """``grader=``, or the checklist for the legacy ``grade=True`` (with its warning)."""
    if grader is not None and not callable(grader):
        raise ConfigError("grader must be a callable row -> {'reward': ...}")
    if not grade:
        return grader
    if grader is not None:
        raise ConfigError("pass grade=True (legacy) or grader=, not both")
    warnings.append(grading.GRADE_WARNING)
    return grading.checklist_grader


def close_owned(*owned: object) -> None:
    """Close what this call opened (a model client, the LLM grader); None is skipped."""
    for thing in owned:
        close = getattr(thing, "close", None)
        if callable(close):
            close()


@dataclass(frozen=True, slots=True, kw_only=True)
class Plan:
    """What the run plays: the spec, the grid, the tasks to replay, the traces' copy check."""

    spec: AgentSpec
    grid: Any
    tasks: tuple[Situation, ...] | None
    task_repeats: int | None
    reject: SourceCopyCheck | None


@dataclass(frozen=True, slots=True, kw_only=True)
class Cast:
    """Who plays: the ask writer, the agent, the world answering tool calls; ``owned`` are
    the ones this call opened and closes."""

    writer: Writer
    agent: RolloutAgent
    world: ToolWorld
    owned: tuple[object, ...]


def plan_run(agent: AgentArg, tools: Sequence[Mapping[str, Any]] | None, prompt: str | None,
          spec: str | Path | Mapping[str, Any] | None, rubric: str | None,
          traces: TraceSource, dimensions: Mapping[str, Sequence[str]] | None,
          tasks: TaskSource) -> Plan:
    """Step 1: the spec, the grid (aimed by the traces, then ``dimensions``), the tasks."""
    run_spec = _run_spec(agent, tools, prompt, spec, rubric)
    axes = dict(dimensions or {})
    reject = None
    if traces is not None:
        aimed, _asks = _trace_dimensions(traces, run_spec)
        axes = {**aimed, **axes}
        reject = SourceCopyCheck(traces)  # the same test as gate_run, before play
    grid = build_grid(run_spec, axes or None)
    played, task_k = _load_tasks(tasks) if tasks is not None else (None, None)
    return Plan(spec=run_spec, grid=grid, tasks=played, task_repeats=task_k, reject=reject)


def cast_run(agent: AgentArg, simulator: SimulatorArg,
          execute: Callable[[str, dict[str, Any]], Any] | None, spec: AgentSpec,
          cfg: RunConfig, warnings: list[str]) -> Cast:
    """Step 2: the writer, the agent and the world."""
    if execute is not None and not callable(execute):
        raise ConfigError("execute must be a callable (tool_name, arguments) -> result")
    writer = _resolve_writer(simulator, spec, cfg, warnings)
    rollout_agent = _resolve_agent(agent, spec, cfg, writer, execute)
    world: ToolWorld = _ExecuteWorld(execute) if execute else World(
        spec, fault_rate=cfg.fault_rate, seed=cfg.seed)
    model_agent = agent is None or is_model_spec(agent)
    if cfg.logprobs and not model_agent:
        warnings.append("logprobs= records only with model agents; this agent is a callable")
    owned = (rollout_agent if model_agent else None,
             writer if not isinstance(writer, TemplateWriter) else None)
    return Cast(writer=writer, agent=rollout_agent, world=world, owned=owned)
