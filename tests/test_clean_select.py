"""Selection: optimize (rl and sft), preference pairs, the publish gate, holdout and leakage."""

from __future__ import annotations

from typing import Any

import pytest

from whileai.errors import PublishGateError
from whileai.simulations.clean.leakage import (
    drop_leaky_rows,
    leakage_report,
    near_duplicate_prompts,
)
from whileai.simulations.selection.gate import calibrate, publish_gate
from whileai.simulations.selection.holdout import split_pseudo_production
from whileai.simulations.selection.hygiene import (
    dedupe_groups,
    group_signal,
    length_report,
    reward_correlations,
)
from whileai.simulations.selection.optimize import optimize
from whileai.simulations.selection.pairs import build_preference_pairs


def _row(task: str, i: int, reward: float | None, **extra: Any) -> dict[str, Any]:
    return {"scenario_id": task, "prompt": f"ask {task}", "rollout_index": i,
            "final_text": f"reply {i} for {task}", "steps": [], "reward": reward, **extra}


def _group(task: str, rewards: list[float | None], **extra: Any) -> list[dict[str, Any]]:
    return [_row(task, i, r, **extra) for i, r in enumerate(rewards)]


def test_optimize_rl_drops_what_carries_no_gradient() -> None:
    rows = (
        _group("mixed", [1, 0, 1, 0])                     # kept: pass rate 0.5
        + _group("easy", [1, 1, 1, 0])                    # 0.75: in band
        + _group("solved", [1, 1, 1, 1])                  # unanimous
        + _group("hard", [0, 0, 0, 0, 0, 0, 0, 0, 0, 1])  # 0.1: too hard
        + [_row("mixed", 9, None), {"prompt": "", "reward": 1.0}]  # junk
    )
    rows.append(dict(rows[0]))  # an exact duplicate rollout
    truncated = _row("mixed", 7, 1.0, truncated=True)
    kept, report = optimize([*rows, truncated], mode="rl")
    assert {r["scenario_id"] for r in kept} == {"mixed", "easy"}
    assert report["band_dropped"] == {"too_easy": 0, "too_hard": 1}
    assert report["dropped"]["duplicates"] == 1
    assert report["dropped"]["truncated"]["dropped"] == 1
    assert report["dropped"]["unanimous"]["all_pass"] == 1
    assert report["dropped"]["junk"]["unjudged"] == 1
    assert report["dropped"]["junk"]["no_prompt"] == 1
    assert report["rows_out"] == len(kept) == 8
    assert kept[0]["group"] == {"n0": 2, "n1": 2, "reward_mean": 0.5, "reward_std": 0.5}
    assert kept[0]["calibration"]["k"] == 6  # stamped from the rows given, before the prune
    assert any("pass^k" in w for w in report["hygiene_warnings"])
    assert report["eval_sourced"] == 0


def test_optimize_band_truncation_modes_and_kwargs() -> None:
    rows = _group("a", [1, 1, 1, 0]) + _group("b", [1, 0, 0, 0])
    kept, report = optimize(rows, mode="rl", band=(0.3, 0.7))
    assert kept == []
    assert report["band_dropped"] == {"too_easy": 1, "too_hard": 1}
    kept, report = optimize(rows, mode="rl", band=(0.3, 0.7), enforce_band=False)
    assert len(kept) == 8
    assert report["out_of_band_kept"] == 2
    rows = [*_group("c", [1, 0]), _row("c", 5, 1.0, truncated=True)]
    kept, _ = optimize(rows, mode="rl", truncated="penalize")
    penal = [r for r in kept if "reward_before_penalty" in r]
    assert penal[0]["reward"] == 0.0
    assert penal[0]["reward_before_penalty"] == 1.0
    kept, report = optimize(rows, mode="rl", truncated="keep")
    assert report["dropped"]["truncated"]["overlong"] == 1
    with pytest.raises(TypeError, match=r"valid keywords: .*band, enforce_band"):
        optimize(rows, mode="rl", bandd=(0.1, 0.9))


def test_optimize_interleaves_fault_kinds_and_counts_eval_rows() -> None:
    rows = []
    for kind, n in (("timeout", 3), ("deny", 1)):
        for t in range(n):
            rows += _group(f"{kind}{t}", [1, 0], faults=[{"tool": "x", "kind": kind, "call": 0}])
    rows += _group("ev", [1, 0], lineage={"source": "eval"})
    kept, report = optimize(rows, mode="rl")
    order = list(dict.fromkeys(r["scenario_id"] for r in kept))
    assert order[:3] == ["deny0", "ev", "timeout0"]  # one of each kind before any repeat
    assert report["eval_sourced"] == 2
    assert any("evaluate()" in w for w in report["hygiene_warnings"])


def test_optimize_sft_rejection_sampling() -> None:
    rows = _group("a", [0.2, 1.0, 0.5]) + _group("b", [0.0, 0.4]) + _group("c", [1.0, 1.0])
    kept, report = optimize(rows, mode="sft")
    assert [(r["scenario_id"], r["rollout_index"]) for r in kept] == [("a", 1), ("c", 0)]
    assert report["dropped"]["below_min_reward"] == 1
    kept, _ = optimize(rows, mode="sft", select="top_per_prompt", min_reward=0.4)
    assert len(kept) == 3
    kept, _ = optimize(rows, mode="sft", select="top_k_overall", k=2)
    assert all(r["reward"] == 1.0 for r in kept)
    kept, _ = optimize(rows, mode="sft", select="random_per_prompt", seed=1)
    assert sorted(r["scenario_id"] for r in kept) == ["a", "b", "c"]
    with pytest.raises(ValueError, match="needs k="):
        optimize(rows, mode="sft", select="random_k_overall")


def test_preference_pairs_shape_and_length_matching() -> None:
    rows = [
        _row("t", 0, 1.0, final_text="A full answer of medium size."),
        _row("t", 1, 0.0, final_text="Short."),
        _row("t", 2, 0.2, final_text="A wrong answer of medium size!"),
        _row("u", 0, 1.0), _row("u", 1, 1.0),
        _row("v", 0, 1.0),
    ]
    pairs, report = build_preference_pairs(rows, match_length=True)
    assert len(pairs) == 1
    pair = pairs[0]
    assert set(pair) == {"prompt", "chosen", "rejected", "scenario_id", "chosen_reward",
                         "rejected_reward"}
    assert pair["rejected"]["rollout_index"] == 2
    assert pair["scenario_id"] == "t"
    assert report["skipped"]["no_contrast"] == 1
    assert report["skipped"]["single"] == 1
    pairs, _ = build_preference_pairs(rows)
    assert pairs[0]["rejected"]["rollout_index"] == 1


def test_publish_gate_stamps_and_refuses() -> None:
    rows = _group("a", [1, 0, 1, 1], model_version="m1") + _group("b", [1, 1, 1, 1])
    report = publish_gate(rows, mode="rl")
    assert report["ok"]
    assert rows[0]["calibration"]["pass_rate"] == 0.75
    assert rows[0]["calibration"]["policy"] == "m1"
    lo, hi = rows[0]["calibration"]["ci95"]
    assert lo < 0.75 < hi
    assert any("unanimous" in w for w in report["warnings"])
    partly = publish_gate([*_group("p", [1, 0]), _row("p", 2, None)], mode="rl")
    assert any("no usable reward" in w for w in partly["warnings"])
    with pytest.raises(PublishGateError, match="none of 1 asks"):
        publish_gate(_group("b", [1, 1]), mode="rl")
    with pytest.raises(PublishGateError, match="none is graded"):
        publish_gate(_group("c", [None, None]), mode="rl")
    carried = calibrate([{**rows[0], "calibration": {"pass_rate": 0.1, "k": 8}}])
    assert carried[0]["calibration"]["k"] == 8


def test_split_pseudo_production_holds_out_every_flaw() -> None:
    rows = []
    for t in range(20):
        faults = [{"tool": "x", "kind": "timeout", "call": 0}] if t == 13 else []
        seeded = ["hedge"] if t == 17 else []
        rows += _group(f"t{t}", [1.0, 0.0 if t == 5 else 1.0], faults=faults, seeded=seeded)
    prod, train = split_pseudo_production(rows, fraction=0.2, seed=4)
    held = {r["scenario_id"] for r in prod}
    assert {"t13", "t17", "t5"} <= held
    assert len(held) == 4
    assert not held & {r["scenario_id"] for r in train}
    assert len(prod) + len(train) == len(rows)


def test_leakage_and_near_duplicates() -> None:
    sources = [{"prompt": "My order 4412 never arrived and I want a refund"}]
    gen = [{"prompt": "my order 4412 never arrived and i want a refund!"},
           {"prompt": "My order 4412 never arrived, I want a refund"},
           {"prompt": "How do I change my shipping address?"}]
    assert leakage_report(gen, sources)["n_leaky"] == 1  # cosine 0.89 < 0.9
    rep = leakage_report(gen, sources, threshold=0.85)
    assert rep["n_leaky"] == 2
    assert rep["n_exact"] == 1
    kept, rep = drop_leaky_rows(gen, sources, threshold=0.85)
    assert [r["prompt"] for r in kept] == [gen[2]["prompt"]]
    dupes = near_duplicate_prompts([{"scenario_id": "a", "prompt": "where is my order now"},
                                    {"scenario_id": "b", "prompt": "Where is my order now?"},
                                    {"scenario_id": "c", "prompt": "where is my refund"}])
    assert dupes["n_pairs"] == 1
    assert dupes["pairs"][0]["jaccard"] == 1.0


def test_hygiene_helpers() -> None:
    rows = _group("a", [1, 0]) + _group("b", [1, 1]) + _group("c", [0, 0]) + [_row("d", 0, 1.0)]
    sig = group_signal(rows)
    assert (sig["mixed_asks"], sig["all_pass"], sig["all_fail"], sig["single"]) == (1, 1, 1, 1)
    kept, rep = dedupe_groups([*rows, dict(rows[0])])
    assert rep["dropped"] == 1
    assert len(kept) == len(rows)
    long_pass = [_row("x", i, float(i % 2), final_text="w" * (100 if i % 2 else 10))
                 for i in range(10)]
    assert reward_correlations(long_pass)["flagged"] == ["reply_length"]
    assert any("longer" in w for w in length_report(long_pass)["warnings"])


def test_calibrate_writes_mean_kl_from_a_reference() -> None:
    rows = [_row("k", i, float(i % 2), logprob=-10.0, ref_logprob=-12.0, n_tokens=4)
            for i in range(4)]
    stamped = calibrate(rows, ref="ref_logprob")
    assert stamped[0]["calibration"]["mean_kl"] == 0.5
    carried = calibrate([{**rows[0], "calibration": {"pass_rate": 0.1, "k": 8}}],
                        ref="ref_logprob")
    assert carried[0]["calibration"] == {"pass_rate": 0.1, "k": 8, "mean_kl": 0.5}
    assert "calibration" not in rows[0]  # calibrate returns copies
