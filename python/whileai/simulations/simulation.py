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

from whileai.errors import AgentFailedWarning, SpecError
from whileai.rows.keywords import valid_kwargs
from whileai.simulations.data import SimulationData
from whileai.simulations.ingest.from_traces import gate_run
from whileai.simulations.ingest.harness import tools_from_traces
from whileai.simulations.ingest.mining import as_trace_rows
from whileai.simulations.play import grading
from whileai.simulations.play.config import (
    Advanced,
    Mode,
    RepeatPolicy,
    RunConfig,
    Until,
    fold_aliases,
    resolve_config,
)
from whileai.simulations.play.engine import RunInputs, RunResult, run
from whileai.simulations.prepare import (
    AgentArg,
    Cast,
    Grader,
    Plan,
    SimulatorArg,
    TaskSource,
    TraceSource,
    cast_run,
    close_owned,
    pick_grader,
    plan_run,
)

__all__ = ["simulate", "simulate_from_traces"]



@valid_kwargs
def simulate(
    agent: AgentArg = None,
    *,
    tools: Sequence[Mapping[str, Any]] | None = None,
    system_prompt: str | None = None,
    policy: str | None = None,
    spec: str | Path | Mapping[str, Any] | None = None,
    simulator: SimulatorArg = None,
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
    grader: Grader | None = None,
    execute: Callable[[str, dict[str, Any]], Any] | None = None,
    tasks: TaskSource = None,
    traces: TraceSource = None,
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
    An alias and its canonical name may both be given only when they agree. The aliases, one
    table (``run.config.ALIAS_TABLE``), folded before anything else runs:

    ==========  ==========================
    alias       canonical keyword
    ==========  ==========================
    policy      system_prompt
    phrasings   requests_per_situation
    n           requests_per_situation
    repeats     rollouts_per_request
    unique      unique_situations
    risk        fault_rate
    ==========  ==========================

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
    knobs = fold_aliases({
        "mode": mode, "situations": situations,
        "requests_per_situation": requests_per_situation, "phrasings": phrasings, "n": n,
        "rollouts_per_request": rollouts_per_request, "repeats": repeats,
        "unique_situations": unique_situations, "unique": unique, "budget": budget,
        "time_budget": time_budget, "until": until, "fault_rate": fault_rate, "risk": risk,
        "repeat_policy": repeat_policy, "reproducible": reproducible, "logprobs": logprobs,
        "progress": progress, "advanced": advanced,
        "system_prompt": system_prompt, "policy": policy,
    })
    cfg = resolve_config(knobs)
    if llm_grade:
        grading.require_judge(llm_grade)  # before anything runs: no judge, no run
    plan = plan_run(agent, tools, knobs["system_prompt"], spec, rubric, traces, dimensions, tasks)
    warnings: list[str] = []
    cast = cast_run(agent, simulator, execute, plan.spec, cfg, warnings)
    graders = (pick_grader(grader, grade, warnings),
               grading.llm_grader(llm_grade) if llm_grade else None)
    result = _play(plan, cast, cfg, graders, output=output, overwrite=overwrite,
                   warnings=warnings)
    return _finish(result, plan, cfg, llm=graders[1], traces=traces, output=output)


def _play(plan: Plan, cast: Cast, cfg: RunConfig,
          graders: tuple[Grader | None, grading.LLMGrader | None], *,
          output: str | Path | None, overwrite: bool, warnings: list[str]) -> RunResult:
    """Step 3: run the engine, then close what this call opened."""
    grader, llm = graders
    try:
        return run(RunInputs(
            spec=plan.spec, grid=plan.grid, writer=cast.writer, agent=cast.agent,
            world=cast.world, cfg=cfg, grader=grader, output=output, overwrite=overwrite,
            tasks=plan.tasks, task_repeats=plan.task_repeats, warnings=tuple(warnings),
            reject=plan.reject, finish=llm,
        ))
    finally:
        close_owned(llm, *cast.owned)


def _finish(result: RunResult, plan: Plan, cfg: RunConfig, *,
            llm: grading.LLMGrader | None, traces: TraceSource,
            output: str | Path | None) -> SimulationData:
    """Step 4: the LLM grade report, the traces' last copy check, the result object."""
    trajectories, search = result.trajectories, result.search
    if llm is not None and trajectories:  # each row was graded before it was written
        search["llm_grade"] = llm.report(trajectories)
    if traces is not None:  # final safety net: the picker already refused copies
        trajectories, search = gate_run(trajectories, search, traces, output)
    if not trajectories and result.stopped_because == "agent_failed":
        warn(AgentFailedWarning(
            f"simulate: no rows; the agent failed all {search.get('agent_errors', 0)} rollouts "
            f"it was given (first error: {search.get('first_agent_error')})"), stacklevel=3)
    return SimulationData(
        trajectories=trajectories,
        search=search,
        stopped_because=result.stopped_because,
        mode=cfg.mode,
        rollouts_per_request=result.repeats,
        system_prompt=plan.spec.policy,
        tools=[t.to_openai() for t in plan.spec.tools],
        rubric=plan.spec.rubric,
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
