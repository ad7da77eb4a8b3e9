"""``simulate()``: the agent's tools and prompt in, rows out (``simulate_from_traces``: traces in).

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
from pathlib import Path
from typing import Any
from warnings import warn

from whileai.errors import AgentFailedWarning, ConfigError, SpecError
from whileai.platform.resolve import resolve_ids
from whileai.rows.jsonl import load_rows
from whileai.rows.keywords import valid_kwargs
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
from whileai.simulations.ingest.from_traces import SourceCopyCheck, gate_run
from whileai.simulations.ingest.harness import tools_from_traces
from whileai.simulations.ingest.mining import as_trace_rows
from whileai.simulations.ingest.traces import load_traces
from whileai.simulations.models.unconfigured import no_model_message
from whileai.simulations.play import grading
from whileai.simulations.play.config import (
    Advanced,
    Mode,
    RepeatPolicy,
    RunConfig,
    Until,
    resolve_config,
)
from whileai.simulations.play.engine import RunInputs, run
from whileai.simulations.world.mock import World

__all__ = ["simulate", "simulate_from_traces"]


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


def _grader(grader: Callable[[dict[str, Any]], Mapping[str, Any]] | None, grade: bool,
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


def _close(*owned: object) -> None:
    """Close what this call opened (a model client, the LLM grader); None is skipped."""
    for thing in owned:
        close = getattr(thing, "close", None)
        if callable(close):
            close()


@valid_kwargs
def simulate(
    agent: object = None,
    *,
    tools: Sequence[Mapping[str, Any]] | None = None,
    system_prompt: str | None = None,
    policy: str | None = None,
    spec: str | Path | Mapping[str, Any] | None = None,
    simulator: object = None,
    mode: Mode = "explore",
    situations: int | None = None,
    requests_per_situation: int | None = None,
    phrasings: int | None = None,
    n: int | None = None,
    rollouts_per_request: int | None = None,
    repeats: int | None = None,
    unique_situations: bool | None = None,
    unique: bool | None = None,
    budget: int = 1000,
    time_budget: float | None = None,
    until: Until = "compute",
    fault_rate: float | None = None,
    risk: float | None = None,
    repeat_policy: RepeatPolicy | None = None,
    reproducible: bool = False,
    grader: Callable[[dict[str, Any]], Mapping[str, Any]] | None = None,
    execute: Callable[[str, dict[str, Any]], Any] | None = None,
    tasks: object = None,
    traces: object = None,
    dimensions: Mapping[str, Sequence[str]] | None = None,
    rubric: str | None = None,
    output: str | Path | None = None,
    overwrite: bool = False,
    logprobs: bool | str = False,
    llm_grade: bool | str = False,
    grade: bool = False,
    progress: bool = True,
    advanced: Advanced | None = None,
) -> SimulationData:
    """Simulate situations for an agent, play it through them, and return the rows.

    Every keyword is keyword-only; a misspelt one raises ``TypeError`` listing the valid ones.
    An alias and its canonical name may both be given only when they agree.

    Args:
        agent: a callable ``message -> {"steps": [...], "final_text": str}``, an object with
            ``run(situation, *, world, seed)``, ``zps.seeded_agent(TOOLS)``, or a model spec
            (``"openai:<model>"``, ``zps.local_model(...)``); None: the configured agent model.
        tools: the agent's tools, OpenAI function-calling shape (the bare ``function`` dict
            works too). Default: from ``spec`` or from the agent object.
        system_prompt: the agent's system prompt (its policy). Alias ``policy``.
        policy: alias of ``system_prompt``.
        spec: a spec folder or file (tools, system prompt, rubric), or its dict.
        simulator: the writer of the asks: a model spec, a ``Writer``, ``False`` for the
            built-in template writer, or None (the configured simulator model, else templates
            with a warning).
        mode: ``"explore"``, ``"sft"``, ``"rl"`` or ``"adaptive"``; sets the defaults of the
            shape knobs below.
        situations: distinct situations to simulate (N); default: as many as ``budget`` allows.
        requests_per_situation: phrasings per situation (n); default from ``mode``. Aliases
            ``phrasings``, ``n``.
        phrasings: alias of ``requests_per_situation``.
        n: alias of ``requests_per_situation``.
        rollouts_per_request: rollouts per phrasing (k); default from ``mode`` (8 in ``rl``).
            Alias ``repeats``.
        repeats: alias of ``rollouts_per_request``.
        unique_situations: keep only situations unlike the ones already played; default on.
            Alias ``unique``.
        unique: alias of ``unique_situations``.
        budget: row cap.
        time_budget: seconds; None or 0 switches the clock off.
        until: ``"compute"`` runs to the budget; ``"saturation"`` also stops when coverage
            plateaus.
        fault_rate: share of tool calls the mock world fails on schedule, 0..1; default 0.5.
            Alias ``risk``.
        risk: alias of ``fault_rate``.
        repeat_policy: ``"adaptive"`` (default in ``rl``: more rollouts where the outcome is
            mixed) or ``"fixed"`` (the default elsewhere).
        reproducible: round-synchronous scheduling: the same rows for the same seed whatever
            the thread timing (needs ``time_budget`` off).
        grader: a judge callable ``row -> {"reward": ...}`` run as rows land.
        execute: ``(tool_name, arguments) -> result``: your own world answers every tool call
            instead of the mock world (no fault schedule).
        tasks: a previous run (or its rows or JSONL path) whose tasks are played again.
        traces: graded traces (row dicts or a JSONL path) that aim the grid at observed
            failures; their asks never enter the rows.
        dimensions: extra grid axes, ``{axis: [values]}`` (they win over the traces' axes).
        rubric: rubric text stored with the run for later grading.
        output: JSONL path the rows stream to. A re-run with the same ``output=`` resumes
            when the file's rows carry this run's ``run_fingerprint``; a file of another run
            is refused with ``ConfigError`` naming what differs.
        overwrite: start ``output=`` anew (its old rows are deleted) instead of resuming or
            refusing it.
        logprobs: record token log-probabilities (model agents only).
        llm_grade: add ``llm_reward`` from a judge model to every row: ``True`` for the
            configured judge (``WHILEAI_JUDGE``), else ``openai:gpt-4.1-mini`` when only
            ``OPENAI_API_KEY`` is set; or a judge spec string (found before the run starts).
        grade: legacy: grade each row with the deterministic ``task_checklist``; prefer
            ``grader=zps.task_checklist``.
        progress: one progress line on stderr when it is a terminal; False silences it.
        advanced: the rarely changed knobs (:class:`~whileai.simulations.play.config.Advanced`):
            ``concurrency``, ``stop_grace``, ``embedder``, ``seed``, ``avg_turns``, ``probe``.

    Returns:
        The run: ``trajectories`` (the rows), ``search`` (its report), ``stopped_because``
        (a :data:`~whileai.simulations.play.stop.StopReason`).

    Raises:
        TypeError: an unknown keyword or ``advanced`` key (the message lists the valid ones).
        SpecError: no tools and no system prompt, or a malformed tool.
        ConfigError: a knob out of range, an alias that disagrees with its canonical name, a
            model spec with no backend, or ``llm_grade=True`` with no judge configured (raised
            before the run).
        AuthError: a model endpoint refused the key (the message names the variable to set).

    Warns:
        AgentFailedWarning: the agent failed every rollout (no rows; ``stopped_because`` is
            ``"agent_failed"`` and ``search["first_agent_error"]`` says why).
    """
    cfg = resolve_config({
        "mode": mode, "situations": situations,
        "requests_per_situation": requests_per_situation, "phrasings": phrasings, "n": n,
        "rollouts_per_request": rollouts_per_request, "repeats": repeats,
        "unique_situations": unique_situations, "unique": unique, "budget": budget,
        "time_budget": time_budget, "until": until, "fault_rate": fault_rate, "risk": risk,
        "repeat_policy": repeat_policy, "reproducible": reproducible, "logprobs": logprobs,
        "progress": progress, "advanced": advanced,
        "system_prompt": system_prompt, "policy": policy,
    })
    if llm_grade:
        grading.require_judge(llm_grade)  # before anything runs: no judge, no run
    prompt = system_prompt if system_prompt is not None else policy
    run_spec = _run_spec(agent, tools, prompt, spec, rubric)
    warnings: list[str] = []
    axes = dict(dimensions or {})
    reject = None
    if traces is not None:
        aimed, _asks = _trace_dimensions(traces, run_spec)
        axes = {**aimed, **axes}
        reject = SourceCopyCheck(traces)  # the same test as gate_run, before play
    grid = build_grid(run_spec, axes or None)
    played, task_k = _load_tasks(tasks) if tasks is not None else (None, None)
    if execute is not None and not callable(execute):
        raise ConfigError("execute must be a callable (tool_name, arguments) -> result")
    writer = _resolve_writer(simulator, run_spec, cfg, warnings)
    rollout_agent = _resolve_agent(agent, run_spec, cfg, writer, execute)
    world: ToolWorld = _ExecuteWorld(execute) if execute else World(
        run_spec, fault_rate=cfg.fault_rate, seed=cfg.seed)
    if cfg.logprobs and not (agent is None or is_model_spec(agent)):
        warnings.append("logprobs= records only with model agents; this agent is a callable")
    grader = _grader(grader, grade, warnings)
    llm = grading.llm_grader(llm_grade) if llm_grade else None
    try:
        result = run(RunInputs(
            spec=run_spec, grid=grid, writer=writer, agent=rollout_agent, world=world, cfg=cfg,
            grader=grader, output=output, overwrite=overwrite, tasks=played,
            task_repeats=task_k,
            warnings=tuple(warnings), reject=reject, finish=llm,
        ))
    finally:
        owned = rollout_agent if agent is None or is_model_spec(agent) else None
        _close(llm, owned, writer if not isinstance(writer, TemplateWriter) else None)
    trajectories, search = result.trajectories, result.search
    if llm is not None and trajectories:  # each row was graded before it was written
        search["llm_grade"] = llm.report(trajectories)
    if traces is not None:  # final safety net: the picker already refused copies
        trajectories, search = gate_run(trajectories, search, traces, output)
    if not trajectories and result.stopped_because == "agent_failed":
        warn(AgentFailedWarning(
            f"simulate: no rows; the agent failed all {search.get('agent_errors', 0)} rollouts "
            f"it was given (first error: {search.get('first_agent_error')})"), stacklevel=2)
    return SimulationData(
        trajectories=trajectories,
        search=search,
        stopped_because=result.stopped_because,
        mode=cfg.mode,
        rollouts_per_request=result.repeats,
        system_prompt=run_spec.policy,
        tools=[t.to_openai() for t in run_spec.tools],
        rubric=run_spec.rubric,
    )


def simulate_from_traces(traces: Any, agent: Any = None, tools: list[dict[str, Any]] | None = None,
                         policy: str = "", mode: Mode = "rl", **kwargs: Any) -> Any:
    """``simulate(agent, traces=...)`` from graded telemetry alone: with no ``tools`` (and no
    ``spec=``) the tools are read off the traces; other keywords go to ``simulate`` unchanged.

    Raises:
        SpecError: no tools were given, the traces hold no tool call, and no policy either.
    """
    rows = as_trace_rows(traces)
    if tools is None and "spec" not in kwargs:
        tools = tools_from_traces(rows)
        if not tools and not policy.strip():
            raise SpecError(
                "simulate_from_traces: the traces contain no tool calls and no tools= or "
                "policy= was given; pass tools=[...] (OpenAI function shape) or policy='...'")
    if "system_prompt" in kwargs:
        policy = str(kwargs.pop("system_prompt") or policy)
    return simulate(agent, tools=tools, system_prompt=policy or None, traces=rows, mode=mode,
                    **kwargs)
