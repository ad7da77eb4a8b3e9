"""pass@k: textbook formulas, grouping, bad input, intervals and their calibration."""

from __future__ import annotations

import math
import random

import pytest

import whileai.simulations.measure.passat as pa
from whileai import _backend
from whileai.simulations.measure.passat import pass_at, pass_at_k_estimate, pass_pow_k_estimate
from whileai.simulations.measure.stats import paired_difference


def _sign_flip_p(diffs: list[float], *, n_perm: int, seed: int) -> float:
    """The p-value rule of paired_difference, without its bootstrap interval (for speed)."""
    observed = abs(sum(diffs) / len(diffs))
    perms = _backend.sign_flip_means(diffs, n_perm, seed)
    return (1 + sum(abs(m) >= observed - 1e-12 for m in perms)) / (1 + n_perm)


def test_unbiased_estimators_match_the_formulas() -> None:
    assert pass_at_k_estimate(4, 2, 2) == pytest.approx(5 / 6)
    assert pass_pow_k_estimate(4, 2, 2) == pytest.approx(1 / 6)
    assert pass_at_k_estimate(10, 3, 5) == pytest.approx(0.9166667, abs=1e-7)
    assert pass_pow_k_estimate(8, 6, 4) == pytest.approx(15 / 70)
    assert pass_at_k_estimate(5, 0, 3) == 0.0
    assert pass_pow_k_estimate(5, 5, 3) == 1.0
    with pytest.raises(ValueError, match="c <= n"):
        pass_at_k_estimate(3, 4, 2)


def _rows(outcomes: dict[str, list[float]], key: str = "scenario_id") -> list[dict]:
    return [
        {key: task, "prompt": f"ask {task}", "rollout_index": i, "reward": r}
        for task, rs in outcomes.items()
        for i, r in enumerate(rs)
    ]


def test_pass_at_groups_by_task_and_averages_over_tasks() -> None:
    rows = _rows({"a": [1, 1, 1, 1], "b": [0, 0, 0, 0], "c": [1, 0, 1, 0], "d": [1, 1, 1, 0]})
    res = pass_at(rows, n_resamples=200)
    assert res.pass_at_1 == pytest.approx((1 + 0 + 0.5 + 0.75) / 4)
    assert res.k == 4
    assert res.pass_pow_k == pytest.approx(0.25)  # only task a passes all four
    assert res.pass_at_k == pytest.approx(0.75)
    assert res.headroom == pytest.approx(0.75 - res.pass_at_1)
    assert res.per_task == {"ask a": 1.0, "ask b": 0.0, "ask c": 0.5, "ask d": 0.75}
    lo, hi = res.ci95
    assert lo <= res.pass_at_1 <= hi
    assert res.pass_pow_k_ci95 is not None
    assert res.pass_at_k_ci95 is not None
    assert str(res) == ("pass@1 0.56 | pass^4 0.25 | pass@4 0.75 | headroom 0.19 (4 groups, k=4)")


def test_task_key_falls_back_to_task_id_then_prompt() -> None:
    rows = [
        {"task_id": "t", "prompt": "x", "reward": 1},
        {"task_id": "t", "prompt": "y", "reward": 0},
    ]
    assert pass_at(rows, n_resamples=10).n_groups == 1
    rows = [
        {"prompt": "x", "reward": 1},
        {"prompt": "x", "reward": 0},
        {"prompt": "z", "reward": 1},
    ]
    assert pass_at(rows, n_resamples=10).n_groups == 2


def test_small_groups_give_no_k_way_numbers_and_say_why() -> None:
    res = pass_at(_rows({"a": [1, 0], "b": [1, 1], "c": [0, 0]}), n_resamples=50)
    assert res.k == 2
    assert res.pass_at_k is None
    assert res.pass_pow_k is None
    assert res.headroom is None
    assert any("need 4+ repeats" in note for note in res.notes)
    assert "pass^k n/a" in str(res)


def test_k_way_intervals_need_three_groups() -> None:
    res = pass_at(_rows({"a": [1, 0, 1, 1], "b": [0, 0, 1, 0]}), n_resamples=50)
    assert res.pass_at_k is not None
    assert res.pass_at_k_ci95 is None
    assert res.pass_pow_k_ci95 is None


def test_bad_rewards_are_counted_never_scored() -> None:
    rows = [
        *_rows({"a": [1, 0, 1, 1]}),
        {"scenario_id": "a", "reward": None},
        {"scenario_id": "a", "reward": math.nan},
        {"scenario_id": "a", "reward": "1"},
        {"scenario_id": "a", "reward": 7},
        {"scenario_id": "b", "reward": True},
        {"reward": 1},
    ]
    res = pass_at(rows, n_resamples=20)
    notes = " ".join(res.notes)
    assert "1 unjudged" in notes
    assert "3 rows with an invalid reward" in notes
    assert "1 rows had a bool reward" in notes
    assert "1 rows have no scenario_id" in notes
    assert res.n_rows == 5  # four for a, the bool row for b
    assert res.per_task["ask a"] == 0.75


def test_empty_input_is_a_note_not_a_crash() -> None:
    res = pass_at([], n_resamples=10)
    assert res.pass_at_1 is None
    assert res.n_groups == 0
    assert "no judged rows" in res.notes[-1]
    assert "pass@1 n/a" in str(res)


def test_per_task_is_a_dict_keyed_by_prompt() -> None:
    res = pass_at(_rows({"a": [1, 1, 0, 0]}), n_resamples=10)
    with pytest.raises(KeyError):
        res.per_task[0]  # type: ignore[index]


def test_same_seed_same_interval_other_seed_other_interval() -> None:
    rows = _rows({f"t{i}": [1 if (i * j) % 3 else 0 for j in range(4)] for i in range(30)})
    a = pass_at(rows, n_resamples=300, seed=1).ci95
    assert a == pass_at(rows, n_resamples=300, seed=1).ci95
    assert a != pass_at(rows, n_resamples=300, seed=2).ci95


def _coverage(n_experiments: int = 300) -> float:
    """Share of synthetic experiments whose pass@1 interval covers the known truth."""
    rng = random.Random(11)
    levels = (0.1, 0.3, 0.5, 0.8, 0.95)  # task difficulties, equally likely
    truth = sum(levels) / len(levels)  # the population pass@1
    covered = 0
    for experiment in range(n_experiments):
        rows = []
        for t in range(100):
            p = rng.choice(levels)
            rows += [{"task_id": f"t{t}", "reward": int(rng.random() < p)} for _ in range(3)]
        ci = pass_at(rows, n_resamples=150, seed=experiment).ci95
        assert ci is not None
        covered += ci[0] <= truth <= ci[1]
    return covered / n_experiments


def test_pass_at_interval_covers_the_truth_about_95_percent() -> None:
    """300 experiments with a known population pass rate: coverage must be in [92%, 98%]."""
    assert 0.92 <= _coverage(300) <= 0.98


def test_sign_flip_p_value_is_calibrated_under_the_null() -> None:
    """300 null experiments (paired differences symmetric about 0): p < 0.05 in 2% to 8%."""
    rng = random.Random(7)
    rejections = 0
    for experiment in range(300):
        diffs = [rng.choice((-1.0, 1.0)) * rng.random() for _ in range(25)]
        rejections += _sign_flip_p(diffs, n_perm=200, seed=experiment) < 0.05
    assert 0.02 <= rejections / 300 <= 0.08


def test_module_constant_is_four() -> None:
    assert pa.MIN_K == 4


def test_paired_difference_detects_a_real_shift_and_matches_the_p_rule() -> None:
    rng = random.Random(3)
    diffs = [0.3 + rng.gauss(0, 0.2) for _ in range(30)]
    out = paired_difference(diffs, n_resamples=300, seed=4)
    assert out["p_value"] < 0.01
    assert out["ci95"][0] > 0
    assert out["p_value"] == _sign_flip_p(diffs, n_perm=300, seed=5)
