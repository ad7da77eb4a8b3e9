"""The public calls show their keywords: ``inspect.signature`` lists each documented knob as a
typed keyword-only parameter, and a misspelt keyword still names the valid ones."""

from __future__ import annotations

import inspect
import typing

import pytest

import whileai.simulations as zps
from _tools import TOOLS
from whileai.errors import ConfigError
from whileai.simulations.play.config import ADVANCED_DEFAULTS, ALIASES, MODES, Advanced

QUIET = {"simulator": False, "progress": False}

# The spec's parameter reference for simulate(), aliases included.
SIMULATE_KNOBS = (
    "spec", "tools", "system_prompt", "situations", "traces", "tasks", "grader", "execute",
    "requests_per_situation", "rollouts_per_request", "unique_situations", "mode",
    "reproducible", "budget", "time_budget", "until", "grade", "llm_grade", "output",
    "advanced", "phrasings", "n", "repeats", "unique", "policy", "risk", "fault_rate",
    "simulator", "repeat_policy", "dimensions", "logprobs", "rubric", "progress",
)


def echo(message: str) -> dict[str, typing.Any]:
    return {"steps": [], "final_text": "ok"}


def test_simulate_lists_every_documented_knob_as_keyword_only() -> None:
    params = inspect.signature(zps.simulate).parameters
    assert next(iter(params)) == "agent"
    missing = [k for k in SIMULATE_KNOBS if k not in params]
    assert missing == []
    assert all(params[k].kind is inspect.Parameter.KEYWORD_ONLY for k in SIMULATE_KNOBS)
    assert not any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
    assert all(params[k].annotation is not inspect.Parameter.empty for k in params)
    assert set(ALIASES) <= set(params)
    assert set(ALIASES.values()) <= set(params)


def test_simulate_types_resolve_and_closed_sets_are_literals() -> None:
    hints = typing.get_type_hints(zps.simulate)
    assert typing.get_args(hints["mode"]) == MODES
    assert set(typing.get_type_hints(Advanced)) == set(ADVANCED_DEFAULTS)


def test_a_misspelt_keyword_lists_the_valid_ones() -> None:
    with pytest.raises(TypeError, match=r"\['sede'\]; valid keywords: agent, tools, "):
        zps.simulate(echo, tools=TOOLS, sede=1, **QUIET)  # type: ignore[call-arg]


def test_an_alias_and_its_name_must_agree_and_none_means_not_given() -> None:
    with pytest.raises(ConfigError, match="disagree"):
        zps.simulate(echo, tools=TOOLS, repeats=2, rollouts_per_request=3, **QUIET)
    same = zps.simulate(echo, tools=TOOLS, repeats=2, rollouts_per_request=2, budget=4, **QUIET)
    assert same.rollouts_per_request == 2
    given = zps.simulate(echo, tools=TOOLS, budget=3, **QUIET)
    explicit = zps.simulate(echo, tools=TOOLS, budget=3, situations=None, risk=None,
                            repeat_policy=None, **QUIET)
    assert [r["prompt"] for r in given.trajectories] == \
        [r["prompt"] for r in explicit.trajectories]


def test_policy_is_the_system_prompt() -> None:
    data = zps.simulate(echo, tools=TOOLS, policy="Be brief.", budget=2, **QUIET)
    assert data.system_prompt == "Be brief."


TYPED_CALLS = ("simulate", "grade", "evaluate", "optimize", "export_dataset", "export_training",
               "training_rows", "export_preference", "export_environment", "load_environment",
               "to_hf_folder", "hack_scan_diff")


@pytest.mark.parametrize("name", TYPED_CALLS)
def test_public_calls_take_no_catch_all_keywords(name: str) -> None:
    params = inspect.signature(getattr(zps, name)).parameters.values()
    assert not any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params)
    with pytest.raises(TypeError, match=r"\['no_such_knob'\]; valid keywords: "):
        getattr(zps, name)([], "x", no_such_knob=1)


def test_optimize_names_the_keywords_of_the_mode() -> None:
    with pytest.raises(TypeError, match=r"mode='sft'\) does not take band; its keywords: select"):
        zps.optimize([], mode="sft", band=(0.1, 0.9))  # type: ignore[call-overload]
    with pytest.raises(TypeError, match=r"mode='rl'\) does not take k; its keywords: band"):
        zps.optimize([], mode="rl", k=3)  # type: ignore[call-overload]
    rows = [{"task_id": "t", "prompt": "p", "final_text": f"r{i}", "reward": float(i % 2)}
            for i in range(4)]
    assert zps.optimize(rows, mode="sft", min_reward=1.0)[1]["rows_out"] == 1


# Where a catch-all stays, and why: the transformers callback contract passes its objects as
# keywords; metrics, notes and score fields are the user's own names; simulate_from_traces
# forwards to simulate, which checks every keyword; the hosted stubs raise whatever they get.
CATCH_ALL_OK = {"HackMonitor.on_log", "HackMonitor.on_step_end", "TrainerCallback.on_train_begin",
                "TrainerCallback.on_log", "TrainerCallback.on_step_end",
                "TrainerCallback.on_train_end", "TrainingRun.log", "TrainingRun.note", "cut",
                "cuts", "send_score", "simulate_from_traces", "models", "serve", "train"}


def _public_callables() -> list[tuple[str, object]]:
    found: list[tuple[str, object]] = []
    for name in zps.__all__:
        obj = getattr(zps, name)
        if inspect.isclass(obj):
            found += [(f"{name}.{m}", f) for m, f in vars(obj).items()
                      if callable(f) and not m.startswith("_")]
        elif callable(obj):
            found.append((name, obj))
    return found


def test_no_public_call_hides_its_keywords() -> None:
    hidden = []
    for name, fn in _public_callables():
        try:
            params = inspect.signature(fn).parameters.values()  # type: ignore[arg-type]
        except (TypeError, ValueError):
            continue
        if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params):
            hidden.append(name)
    assert sorted(set(hidden) - CATCH_ALL_OK) == []


def test_grade_method_refuses_the_other_judges_options() -> None:
    data = zps.simulate(echo, tools=TOOLS, budget=2, **QUIET)
    with pytest.raises(ConfigError, match=r"scale= only applies to a callable judge"):
        data.grade(judge="openai:gpt-x", scale=(1, 5))
    with pytest.raises(ConfigError, match=r"temperature= only applies to a judge model"):
        data.grade(judge=lambda row: {"reward": 1}, temperature=0.7)
    scored = data.grade(judge=lambda row: 4, scale=(1, 5), name="likert", workers=2)
    assert [r["reward"] for r in scored.rows] == [0.75, 0.75]
    assert scored.judge_name == "likert"
    labelled = [dict(r, gold_reward=1) for r in scored.rows]
    assert type(scored)(rows=labelled).agreement(threshold=0.5)["n"] == 2
    with pytest.raises(TypeError):
        scored.agreement(treshold=0.5)  # type: ignore[call-arg]
