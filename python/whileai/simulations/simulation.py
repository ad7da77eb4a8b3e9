"""``simulate()``: the agent's tools and prompt in, rows out.

>>> import whileai.simulations as zps
>>> TOOLS = [{"type": "function", "function": {"name": "get_order", "parameters": {
...     "type": "object", "properties": {"order_id": {"type": "string"}}}}}]
>>> data = zps.simulate(lambda m: {"steps": [], "final_text": "ok"}, tools=TOOLS,
...                     system_prompt="Help.", simulator=False, budget=3, progress=False)
>>> len(data), data.stopped_because
(3, 'budget')
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from whileai.errors import ConfigError, SpecError
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
from whileai.simulations.ingest.from_traces import SourceCopyCheck, gate_run
from whileai.simulations.ingest.traces import load_traces
from whileai.simulations.io import load_rows, write_jsonl
from whileai.simulations.rows import export_row, task_key
from whileai.simulations.run import grading
from whileai.simulations.run.config import RunConfig, resolve_config
from whileai.simulations.run.engine import RunInputs, run
from whileai.simulations.spec import AgentSpec, agent_spec, inspect
from whileai.simulations.world.mock import World

__all__ = ["simulate"]


class _ExecuteWorld:
    """The caller's ``execute(tool, arguments)`` as a world (no SDK faults)."""

    def __init__(self, execute: Callable[[str, dict[str, Any]], Any]) -> None:
        self.execute = execute

    def call(self, tool: str, arguments: Mapping[str, Any] | None = None) -> Any:
        return self.execute(tool, dict(arguments or {}))


def _resolve_writer(simulator: object, spec: AgentSpec, cfg: RunConfig,
                    warnings: list[str]) -> Writer:
    if simulator is False:
        return TemplateWriter()
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
        warnings.append(
            "no simulator model is configured (simulator=, whileai.configure or "
            "WHILEAI_SIMULATOR): used the built-in template writer; pass simulator=False "
            "to silence this"
        )
        return TemplateWriter()
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
    source = tasks.trajectories if isinstance(tasks, SimulationData) else tasks
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


def simulate(agent: object = None, **knobs: Any) -> SimulationData:
    """Simulate situations for an agent, play it through them, and return the rows.

    Args:
        agent: a callable ``message -> {"steps": [...], "final_text": str}``, an object with
            ``run(situation, *, world, seed)``, ``zps.seeded_agent(TOOLS)``, or a model spec.
        **knobs: ``tools``, ``system_prompt``/``policy``, ``spec``, ``simulator``, ``mode``,
            ``situations``, ``requests_per_situation``/``phrasings``/``n``,
            ``rollouts_per_request``/``repeats``, ``unique_situations``/``unique``,
            ``budget``, ``time_budget``, ``until``, ``fault_rate``/``risk``,
            ``repeat_policy``, ``grader``, ``execute``, ``tasks``, ``output``,
            ``reproducible``, ``traces``, ``dimensions``, ``logprobs``, ``rubric``,
            ``progress``, ``advanced``, ``llm_grade``, ``grade`` (legacy) (see the parameter
            reference).

    Raises:
        TypeError: an unknown keyword (the message lists the valid ones).
        SpecError: no tools and no system prompt, or a malformed tool.
        ConfigError: a knob out of range, a model spec with no backend, or ``llm_grade=True``
            with no judge configured (raised before the run).
        AuthError: a model endpoint refused the key (the message names the variable to set).
    """
    if "agent" in knobs:
        if agent is not None:
            raise TypeError("simulate() got agent twice (positional and agent=)")
        agent = knobs.pop("agent")
    cfg = resolve_config(knobs)
    if knobs.get("llm_grade"):
        grading.require_judge()  # before anything runs: no judge, no run
    tools = knobs.get("tools")
    prompt = knobs.get("system_prompt", knobs.get("policy"))
    if tools is None and prompt is None and knobs.get("spec") is None and agent is not None \
            and not is_model_spec(agent):
        carried = inspect(agent)  # an agent object that carries its own tools and prompt
        tools, prompt = carried["tools"] or None, carried["system_prompt"] or None
    spec = agent_spec(tools=tools, system_prompt=prompt, spec=knobs.get("spec"))
    if knobs.get("rubric"):
        spec = AgentSpec(tools=spec.tools, policy=spec.policy, situations=spec.situations,
                         rubric=str(knobs["rubric"]), notes=spec.notes)
    warnings: list[str] = []
    dimensions = dict(knobs.get("dimensions") or {})
    reject = None
    if knobs.get("traces") is not None:
        aimed, _asks = _trace_dimensions(knobs["traces"], spec)
        dimensions = {**aimed, **dimensions}
        reject = SourceCopyCheck(knobs["traces"])  # the same test as gate_run, before play
    grid = build_grid(spec, dimensions or None)
    tasks, task_k = (None, None)
    if knobs.get("tasks") is not None:
        tasks, task_k = _load_tasks(knobs["tasks"])
    execute = knobs.get("execute")
    if execute is not None and not callable(execute):
        raise ConfigError("execute must be a callable (tool_name, arguments) -> result")
    writer = _resolve_writer(knobs.get("simulator"), spec, cfg, warnings)
    rollout_agent = _resolve_agent(agent, spec, cfg, writer, execute)
    world: ToolWorld = _ExecuteWorld(execute) if execute else World(
        spec, fault_rate=cfg.fault_rate, seed=cfg.seed)
    if cfg.logprobs and not (agent is None or is_model_spec(agent)):
        warnings.append("logprobs= records only with model agents; this agent is a callable")
    grader = knobs.get("grader")
    if grader is not None and not callable(grader):
        raise ConfigError("grader must be a callable row -> {'reward': ...}")
    if knobs.get("grade"):
        if grader is not None:
            raise ConfigError("pass grade=True (legacy) or grader=, not both")
        grader = grading.checklist_grader
        warnings.append(grading.GRADE_WARNING)
    try:
        result = run(RunInputs(
            spec=spec, grid=grid, writer=writer, agent=rollout_agent, world=world, cfg=cfg,
            grader=grader, output=knobs.get("output"), tasks=tasks, task_repeats=task_k,
            warnings=tuple(warnings), reject=reject,
        ))
    finally:
        for owned in (rollout_agent if agent is None or is_model_spec(agent) else None,
                      writer if not isinstance(writer, TemplateWriter) else None):
            close = getattr(owned, "close", None)
            if callable(close):
                close()
    trajectories, search = result.trajectories, result.search
    if knobs.get("llm_grade") and trajectories:
        search["llm_grade"] = grading.llm_grade(trajectories)
        if knobs.get("output") is not None:  # the streamed rows get their llm_reward too
            write_jsonl(knobs["output"], [export_row(r) for r in trajectories])
    if knobs.get("traces") is not None:  # final safety net: the picker already refused copies
        trajectories, search = gate_run(trajectories, search, knobs["traces"],
                                        knobs.get("output"))
    return SimulationData(
        trajectories=trajectories,
        search=search,
        stopped_because=result.stopped_because,
        mode=cfg.mode,
        rollouts_per_request=result.repeats,
        system_prompt=spec.policy,
        tools=[t.to_openai() for t in spec.tools],
        rubric=spec.rubric,
    )
