"""compare_runs, delta_report, eval_variance, benchmark, summaries and power sizing."""

from __future__ import annotations

import random
from typing import Any

import pytest

from whileai.errors import ConfigError
from whileai.simulations.judge.benchmark import benchmark_report, format_benchmark, run_benchmark
from whileai.simulations.measure.compare import compare_runs, marker_summary, metric_summary
from whileai.simulations.measure.delta import delta_report, eval_variance, format_delta_report
from whileai.simulations.measure.power import detectable_effect, holdout_size

R = 300  # resamples: enough for stable verdicts on these clear-cut inputs, fast in pure mode


def run(
    rates: dict[str, float], k: int = 4, markers: dict[str, float] | None = None, **extra: Any
) -> list[dict[str, Any]]:
    """k rollouts per task, ``round(rate * k)`` of them passing."""
    rows = []
    for task, rate in rates.items():
        for i in range(k):
            rows.append(
                {
                    "scenario_id": task,
                    "prompt": task,
                    "rollout_index": i,
                    "reward": 1 if i < round(rate * k) else 0,
                    "markers": dict(markers or {}),
                    **extra,
                }
            )
    return rows


def test_paired_comparison_finds_a_real_improvement() -> None:
    rng = random.Random(1)
    base = {f"t{i}": rng.choice([0.0, 0.25, 0.5]) for i in range(30)}
    better = {t: min(1.0, r + 0.5) for t, r in base.items()}
    out = compare_runs(run(base), run(better), n_resamples=R)
    assert out["paired"] is True
    assert out["verdict"] == "b_better"
    assert out["delta"] == pytest.approx(sum(better.values()) / 30 - sum(base.values()) / 30)
    assert out["ci95"][0] > 0
    assert out["p_value"] < 0.01
    assert out["paired_share"] == 1.0
    reverse = compare_runs(run(better), run(base), n_resamples=R)
    assert reverse["verdict"] == "a_better"


def test_identical_runs_show_no_difference() -> None:
    rates = {f"t{i}": (i % 4) / 4 for i in range(20)}
    out = compare_runs(run(rates), run(rates), n_resamples=R)
    assert out["verdict"] == "no_difference_detected"
    assert out["delta"] == 0.0
    assert out["p_value"] == 1.0


def test_partial_overlap_is_reported() -> None:
    a = run({f"t{i}": 0.0 for i in range(10)})
    b = run({f"t{i}": 1.0 for i in range(5, 20)})
    out = compare_runs(a, b, n_resamples=R)
    assert out["n_shared"] == 5
    assert out["paired_share"] == pytest.approx(5 / 20)
    assert "15 of 20 tasks are on one side only" in out["note"]


def test_few_shared_tasks_fall_back_to_unpaired_and_say_so() -> None:
    a = run({f"a{i}": 0.0 for i in range(10)})
    b = run({f"b{i}": 1.0 for i in range(10)})
    out = compare_runs(a, b, n_resamples=R)
    assert out["paired"] is False
    assert "unpaired" in out["note"]
    assert out["verdict"] == "b_better"


def test_insufficient_data() -> None:
    out = compare_runs(run({"a": 1.0}), run({"b": 0.0}), n_resamples=R)
    assert out["verdict"] == "insufficient_data"
    assert compare_runs([], run({"b": 0.0}))["verdict"] == "insufficient_data"


def test_marker_metrics_and_summaries() -> None:
    rows = run({f"t{i}": 0.5 for i in range(6)}, markers={"grounded": 1.0})
    rows[0]["markers"]["grounded"] = 0.0
    summary = metric_summary(rows, "marker:grounded", n_resamples=R)
    assert summary["n_tasks"] == 6
    assert summary["mean"] == pytest.approx((0.75 + 5) / 6)
    assert marker_summary(rows, n_resamples=R)["grounded"]["mean"] == summary["mean"]


def test_delta_report_target_guard_and_proxy() -> None:
    tasks = [f"t{i}" for i in range(12)]
    before = run(dict.fromkeys(tasks, 0.25), markers={"honest": 1.0, "first_action": 0.0})
    after = run(dict.fromkeys(tasks, 0.75), markers={"honest": 0.0, "first_action": 1.0})
    rep = delta_report(
        before,
        after,
        target="pass_at_1",
        must_not_regress=["honest"],
        proxy="marker:first_action",
        n_resamples=R,
    )
    assert rep["headline"] == "moved_up"
    assert rep["metrics"]["honest"]["direction"] == "down"
    assert rep["ok"] is False
    assert any("honest regressed" in f for f in rep["failures"])
    assert rep["proxy"]["over_optimized"] is False
    text = format_delta_report(rep)
    assert text.splitlines()[0] == "target pass_at_1: moved_up (FAILED)"
    assert "FAIL: honest regressed" in text


def test_delta_report_flags_an_over_optimized_proxy() -> None:
    tasks = [f"t{i}" for i in range(12)]
    before = run(dict.fromkeys(tasks, 0.5), markers={"first_action": 0.0})
    after = run(dict.fromkeys(tasks, 0.5), markers={"first_action": 1.0})
    rep = delta_report(before, after, proxy="first_action", n_resamples=R)
    assert rep["proxy"]["over_optimized"] is True
    assert rep["ok"] is False


def test_run_std_turns_small_moves_into_noise() -> None:
    tasks = [f"t{i}" for i in range(40)]
    before = run(dict.fromkeys(tasks, 0.5))
    after = run({t: 0.75 if i < 8 else 0.5 for i, t in enumerate(tasks)})
    rep = delta_report(before, after, run_std=0.05, n_resamples=R)
    assert rep["metrics"]["pass_at_1"]["delta"] == pytest.approx(0.05)
    assert rep["headline"] == "within_eval_noise"


def test_by_group_finds_a_group_that_dropped() -> None:
    tasks = [f"t{i}" for i in range(20)]
    before, after = [], []
    for i, t in enumerate(tasks):
        kind = "billing" if i < 10 else "shipping"
        before += run({t: 0.5}, scenario_dimensions={"category": kind})
        after += run({t: 1.0 if kind == "billing" else 0.0}, scenario_dimensions={"category": kind})
    rep = delta_report(before, after, by="category", n_resamples=R)
    assert rep["groups"]["billing"]["direction"] == "up"
    assert rep["groups_down"] == ["shipping"]
    assert any("shipping" in w for w in rep["warnings"])


def test_unknown_target_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="not measured on both runs"):
        delta_report(run({"a": 1.0}), run({"a": 1.0}), target="typo")


def test_eval_variance() -> None:
    runs = [run({"a": r, "b": 0.5}) for r in (0.5, 0.75, 0.25)]
    noise = eval_variance(*runs)
    assert noise["runs"] == 3
    assert noise["values"] == [0.5, 0.625, 0.375]
    assert noise["run_std"] == pytest.approx(0.125)
    assert noise["stability"] == "noisy"
    assert eval_variance(runs[0], runs[0], runs[0])["stability"] == "stable"
    assert eval_variance(runs[0])["run_std"] is None


def test_benchmark_report_and_runner() -> None:
    runs = [run({"a": 1.0, "b": r, "c": 0.0}) for r in (0.0, 1.0, 1.0)]
    rep = benchmark_report(runs, name="holdout", n_resamples=R)
    assert rep["pass_at_1"] == pytest.approx([1 / 3, 2 / 3, 2 / 3])
    assert rep["flipping_tasks"] == ["b"]
    assert rep["sd"] == pytest.approx(0.19245, abs=1e-4)
    assert format_benchmark(rep).startswith("holdout: 3 runs, pass@1 mean 0.556")
    eval_rows = [{"prompt": f"p{i}", "final_text": ""} for i in range(4)]

    def rollout(rows: list[dict[str, Any]], seed: int) -> list[dict[str, Any]]:
        return [dict(r, final_text="yes" if (i + seed) % 2 else "no") for i, r in enumerate(rows)]

    out = run_benchmark(
        eval_rows,
        judge=lambda r: int(r["final_text"] == "yes"),
        rollout=rollout,
        seeds=3,
        n_resamples=R,
    )
    assert out["pass_at_1"] == [0.5, 0.5, 0.5]
    assert len(out["flipping_tasks"]) == 4
    with pytest.raises(ConfigError):
        benchmark_report([])


def test_power_sizing_matches_the_textbook() -> None:
    assert holdout_size(0.1, baseline=0.5) == 388  # Fleiss, no continuity correction
    assert holdout_size(0.05, baseline=0.5) > 4 * holdout_size(0.1, baseline=0.5) - 40
    assert detectable_effect(388, baseline=0.5) == pytest.approx(0.1, abs=1e-3)
    assert detectable_effect(5, baseline=0.9) == pytest.approx(0.1)  # capped at 1 - baseline
    with pytest.raises(ConfigError):
        holdout_size(0.6, baseline=0.5)
    with pytest.raises(ConfigError):
        detectable_effect(0)


def test_power_agrees_with_statsmodels_when_installed() -> None:
    power = pytest.importorskip("statsmodels.stats.power")
    proportion = pytest.importorskip("statsmodels.stats.proportion")
    # statsmodels sizes on Cohen's h; both approximations agree within a few percent
    h = proportion.proportion_effectsize(0.6, 0.5)
    theirs = power.NormalIndPower().solve_power(effect_size=h, alpha=0.05, power=0.8)
    assert holdout_size(0.1, baseline=0.5) == pytest.approx(theirs, rel=0.03)
