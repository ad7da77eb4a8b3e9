"""Judge trust: Wilson, kappa (with library oracles), agreement, labels, probes, pairs, refusals."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from whileai.errors import ConfigError, JudgeError
from whileai.simulations.judge.probes import judge_pairs, judge_probes
from whileai.simulations.judge.trust import attach_labels, judge_agreement, refusal_report
from whileai.simulations.judge.trust_report import format_judge_trust, judge_trust
from whileai.simulations.measure.stats import cohen_kappa, wilson_interval


def test_wilson_textbook_value() -> None:
    lo, hi = wilson_interval(8, 10)
    assert round(lo, 4) == 0.4902
    assert round(hi, 4) == 0.9433
    assert wilson_interval(0, 4)[0] == 0.0
    assert wilson_interval(4, 4)[1] == 1.0
    with pytest.raises(ValueError, match="n >= 1"):
        wilson_interval(0, 0)


def test_wilson_matches_statsmodels() -> None:
    proportion = pytest.importorskip("statsmodels.stats.proportion")
    for k, n in ((8, 10), (0, 7), (13, 50), (49, 50)):
        lo, hi = proportion.proportion_confint(k, n, alpha=0.05, method="wilson")
        assert wilson_interval(k, n) == pytest.approx((lo, hi), abs=1e-9)


def test_kappa_textbook_value_and_sklearn() -> None:
    assert cohen_kappa(20, 5, 10, 15) == pytest.approx(0.4)
    metrics = pytest.importorskip("sklearn.metrics")
    judge = [1] * 20 + [1] * 5 + [0] * 10 + [0] * 15
    gold = [1] * 20 + [0] * 5 + [1] * 10 + [0] * 15
    assert cohen_kappa(20, 5, 10, 15) == pytest.approx(metrics.cohen_kappa_score(judge, gold))


def labelled(pairs: list[tuple[float, float]], text: str = "reply") -> list[dict[str, Any]]:
    return [
        {
            "scenario_id": f"sc-{i}",
            "rollout_index": 0,
            "prompt": f"p{i}",
            "final_text": text,
            "reward": r,
            "gold_reward": g,
        }
        for i, (r, g) in enumerate(pairs)
    ]


def test_agreement_counts_and_rates() -> None:
    rows = labelled([(1, 1)] * 20 + [(1, 0)] * 5 + [(0, 1)] * 10 + [(0, 0)] * 15)
    rows.append({"prompt": "x", "reward": None, "gold_reward": 1})
    rows.append({"prompt": "y", "reward": 1})  # no label: not counted
    rep = judge_agreement(rows)
    assert rep["n"] == 50
    assert rep["confusion"] == {"tp": 20, "fp": 5, "fn": 10, "tn": 15}
    assert rep["agreement"] == pytest.approx(0.7)
    assert rep["kappa"] == pytest.approx(0.4)
    assert rep["pass_when_gold_fail"] == pytest.approx(0.25)
    assert rep["agreement_ci95"] == pytest.approx(wilson_interval(35, 50))
    assert any("no judge reward" in n for n in rep["notes"])
    assert not any("floor" in n for n in rep["notes"])


def test_agreement_small_and_single_class() -> None:
    rep = judge_agreement(labelled([(1, 1), (0, 1), (1, 1)]))
    assert rep["single_class"] is True
    assert rep["kappa"] is None
    assert any("one class" in n for n in rep["notes"])
    assert any("50 is the floor" in n for n in rep["notes"])


def test_agreement_against_a_second_run() -> None:
    first = labelled([(1, 0), (0, 0), (1, 0)])
    second = [dict(r, reward=1) for r in first]
    rep = judge_agreement(first, gold=second)
    assert rep["n"] == 3
    assert rep["agreement"] == pytest.approx(2 / 3)


def test_attach_labels(tmp_path: Path) -> None:
    rows = [{"scenario_id": "sc-a", "rollout_index": i, "prompt": "a"} for i in range(3)]
    path = tmp_path / "labels.jsonl"
    lines = [
        {"scenario_id": "sc-a", "rollout_index": 0, "gold_reward": 1},
        {"scenario_id": "sc-a", "rollout_index": 1, "label": 0, "annotator": "bo"},
        {"scenario_id": "sc-a", "rollout_index": 1, "label": 1, "annotator": "cy"},
        {"scenario_id": "sc-zzz", "rollout_index": 0, "label": 1},
        {"scenario_id": "sc-a", "rollout_index": 2, "label": "yes"},
    ]
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    out, rep = attach_labels(rows, path, annotator="ana")
    assert out[0]["gold_reward"] == 1.0
    assert out[0]["label_source"] == "ana"
    assert out[1]["labels"] == {"bo": 0.0, "cy": 1.0}
    assert rep == {
        "labels": 5,
        "matched": 3,
        "unmatched": 1,
        "invalid": 1,
        "conflicts": 1,
        "annotator": "ana",
        "labelled_rows": 2,
    }
    assert "gold_reward" not in rows[0]  # input untouched


def test_judge_trust_not_measured_without_labels() -> None:
    rep = judge_trust([{"prompt": "p", "reward": 1}])
    assert rep["ok"] is False
    assert rep["status"] == "NOT MEASURED"
    assert format_judge_trust(rep).startswith("judge trust: NOT MEASURED")


def test_judge_trust_measured_clean_judge() -> None:
    rng = random.Random(0)
    rows = []
    for i in range(60):
        gold = i % 2
        text = "ok " * rng.randint(1, 40)
        rows.append(
            {
                "scenario_id": f"sc-{i}",
                "prompt": f"p{i}",
                "final_text": text,
                "gold_reward": gold,
                "reward": gold,
            }
        )

    def judge(row: dict[str, Any]) -> int:
        return int(row["prompt"][1:]) % 2

    rep = judge_trust(rows, judge=judge, probes="all", sample=30)
    assert rep["measured"] is True
    assert rep["agreement"]["agreement"] == 1.0
    assert set(rep["halves"]) == {"a", "b"}
    assert rep["rejudge"]["consistency"] == 1.0
    assert rep["rejudge"]["filler_flip_rate"] == 0.0
    assert rep["review_queue"] == []
    # a judge that reads only the prompt passes every replacement probe on odd prompts
    assert "claimed_success" in rep["exploitable_by"]
    assert rep["ok"] is False
    assert rep["status"] == "CHECK"


def test_judge_trust_catches_length_bias_and_review_queue() -> None:
    rows = []
    for i in range(40):
        gold = i % 2
        long_reply = i % 4 >= 2
        rows.append(
            {
                "scenario_id": f"sc-{i}",
                "prompt": f"p{i}",
                "final_text": "word " * (200 if long_reply else 3),
                "gold_reward": gold,
                "reward": 1 if long_reply else gold,
            }
        )
    rep = judge_trust(rows)
    assert rep["length_bias"]["gold_fail"]["flag"] is True
    assert rep["length_bias"]["gold_pass"]["flag"] is False
    assert len(rep["review_queue"]) == 10
    assert rep["ok"] is False
    assert "length bias" in format_judge_trust(rep)


def test_probes_find_a_length_judge_and_skip_rubric_without_one() -> None:
    rows = [{"prompt": f"p{i}", "final_text": "short", "reward": 0} for i in range(10)]
    rep = judge_probes(rows, lambda r: int(len(r["final_text"]) > 100), sample=10)
    assert rep["probes"]["filler"]["rate"] == 1.0
    assert "filler" in rep["exploitable_by"]
    assert rep["probes"]["rubric_stuffing"]["n"] == 0
    assert any("rubric_stuffing skipped" in n for n in rep["notes"])
    assert "polite_refusal" not in rep["exploitable_by"]
    stuffed = judge_probes(
        rows,
        lambda r: int("accurate" in r["final_text"]),
        rubric="accurate and polite",
        probes=["rubric_stuffing"],
    )
    assert stuffed["exploitable_by"] == ["rubric_stuffing"]
    with pytest.raises(ConfigError, match="unknown probe"):
        judge_probes(rows, lambda r: 1, probes=["nope"])
    with pytest.raises(JudgeError):
        judge_probes(rows, None)  # type: ignore[arg-type]


def test_probes_fail_pool_comes_from_the_probed_judge() -> None:
    # The rows carry reward 0 from another grader; this judge passes every long reply, so no
    # long reply is a failure it could be tricked out of, and filler flips only the short ones.
    rows = [{"prompt": f"p{i}", "final_text": "word " * (50 if i % 2 else 1), "reward": 0}
            for i in range(10)]
    rep = judge_probes(rows, lambda r: int(len(r["final_text"]) > 100), probes=["filler"],
                       sample=10)
    assert rep["failing_sampled"] == 5
    assert rep["probes"]["filler"]["n"] == 5
    assert rep["probes"]["filler"]["rate"] == 1.0
    # A judge that cannot read a row as it is leaves it out of the pool and says so.
    flaky = judge_probes(rows, lambda r: 1 / 0 if r["prompt"] == "p3" else 0, probes=["filler"],
                         sample=10)
    assert flaky["baseline_errors"] == 1
    assert flaky["failing_sampled"] == 9
    assert any("could not be judged" in n for n in flaky["notes"])


def test_probe_judge_errors_are_counted_not_passed() -> None:
    def judge(row: dict[str, Any]) -> int:
        if row["final_text"] != "short":
            raise RuntimeError("boom")
        return 0

    rows = [{"prompt": "p", "final_text": "short"}]
    rep = judge_probes(rows, judge, probes=["filler", "ask_echo"])
    assert rep["probes"]["filler"]["errors"] == 1
    assert rep["probes"]["filler"]["rate"] is None
    assert rep["exploitable_by"] == []


def test_judge_pairs_both_orders() -> None:
    pairs = [{"prompt": "q", "a": "good detailed answer", "b": "meh"} for _ in range(4)]
    _, fair = judge_pairs(pairs, judge=lambda p: "a" if len(p["a"]) > len(p["b"]) else "b")
    assert fair["a_wins"] == 4
    assert fair["position_flip_rate"] == 0.0
    out, biased = judge_pairs(pairs, judge=lambda p: "a")
    assert biased["position_flip_rate"] == 1.0
    assert biased["ties"] == 4
    assert out[0]["winner"] == "tie"
    _, broken = judge_pairs(pairs, judge=lambda p: "maybe")
    assert broken["errors"] == 4
    assert broken["position_flip_rate"] is None
    with pytest.raises(JudgeError):
        judge_pairs(pairs)


def test_refusal_report() -> None:
    rows = [
        {"final_text": t}
        for t in (
            "I'm sorry, but I can't help with that.",
            "I cannot assist with this request.",
            "Your order shipped yesterday.",
            "I can help you with that refund.",
        )
    ] + [{"prompt": "no reply"}]
    rep = refusal_report(rows)
    assert rep["n"] == 4
    assert rep["refusals"] == 2
    assert rep["rate"] == 0.5
    assert rep["ci95"] == pytest.approx(wilson_interval(2, 4))
    assert rep["notes"] == ["1 rows have no final_text and were left out"]
