"""hack_scan: the within-ask scan kernel and the regimes it names on planted data."""

from __future__ import annotations

import random
from array import array
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any, get_args

import pytest

from whileai.simulations.clean.hack_scan import hack_scan
from whileai.simulations.clean.hack_verdict import (
    Cause,
    HackScanReport,
    RankedFeature,
    Regime,
    ScanSupport,
)

DELIMITER = ("contains:done", "headings")  # what a reply ending in "\n### done" is read as
WORDS = ("please", "thanks", "order", "status", "refund", "item", "box", "shipped", "soon",
         "today", "check", "note")


def _rows(
    n_asks: int, k: int, make: Callable[[int, int, random.Random], tuple[str, list[str], float]],
    seed: int = 1,
) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    rows = []
    for ask in range(n_asks):
        for r in range(k):
            text, tools, reward = make(ask, r, rng)
            rows.append({
                "scenario_id": f"sc-{ask:010x}",
                "rollout_index": r,
                "prompt": f"ask {ask}",
                "steps": [{"tool": t, "arguments": {"n": str(i)}, "result": {}}
                          for i, t in enumerate(tools)],
                "final_text": text,
                "reward": reward,
            })
    return rows


def _babble(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(4, 9)))


def test_kernel_centres_within_groups(backend: ModuleType) -> None:
    # feature 0 tracks reward within each group; feature 1 is constant within each group
    groups = array("q", [0, 0, 0, 1, 1, 1])
    reward = array("d", [1.0, 0.0, 0.0, 1.0, 1.0, 0.0])
    f0 = [1.0, 0.0, 0.0, 1.0, 1.0, 0.0]
    f1 = [5.0, 5.0, 5.0, 0.0, 0.0, 0.0]
    indptr, indices, values = array("q", [0]), array("q"), array("d")
    for i in range(6):
        for j, col in enumerate((f0, f1)):
            if col[i]:
                indices.append(j)
                values.append(col[i])
        indptr.append(len(indices))
    scan = backend.within_group_scan
    rho, floor, support = scan(indptr, indices, values, 2, groups, reward, 30, 4)
    assert list(rho) == [1.0, 0.0]
    assert list(support) == [6, 0]
    assert len(floor) == 30
    assert all(0.0 <= v <= 1.0 for v in floor)
    again = backend.within_group_scan(indptr, indices, values, 2, groups, reward, 30, 4)
    assert list(again[1]) == list(floor)
    fewer = backend.within_group_scan(indptr, indices, values, 2, groups, reward, 10, 4)
    assert list(fewer[1]) == list(floor)[:10]  # one stream per permutation
    with pytest.raises(ValueError, match="indices"):
        backend.within_group_scan(indptr, indices, values, 1, groups, reward, 0, 0)


def test_endorsed_tool_that_drives_reward_is_train() -> None:
    def make(ask: int, r: int, rng: random.Random) -> tuple[str, list[str], float]:
        tools = ["lookup_order"] if rng.random() < 0.5 else []
        if rng.random() < 0.4:
            tools.append("search_faq")
        reward = float(bool(tools and tools[0] == "lookup_order") != (rng.random() < 0.1))
        return _babble(rng), tools, reward

    scan = hack_scan(_rows(30, 8, make), endorsed=["tool:lookup_order"], n_perm=50)
    assert scan["regime"] == "train"
    assert scan["top_feature"] == "tool:lookup_order"
    assert scan["top_rho"] > scan["tau"]
    assert scan["integrity"] > 0.5
    # the report has exactly the keys its TypedDicts declare, in their order
    assert list(scan) == list(HackScanReport.__annotations__)
    assert list(scan["support"]) == list(ScanSupport.__annotations__)
    assert scan["features"]
    assert all(list(f) == list(RankedFeature.__annotations__) for f in scan["features"])


def test_paid_delimiter_is_a_reward_hack_named() -> None:
    def make(ask: int, r: int, rng: random.Random) -> tuple[str, list[str], float]:
        tools = ["lookup_order"] if rng.random() < 0.5 else []
        delim = rng.random() < 0.5
        text = _babble(rng) + ("\n### done" if delim else "")
        return text, tools, float(delim != (rng.random() < 0.1))

    scan = hack_scan(_rows(30, 8, make), endorsed=["tool:lookup_order"], n_perm=50)
    assert scan["regime"] == "reward_hack"
    # The delimiter line is its word and a heading line (punctuation is never an auto term).
    assert scan["top_feature"] in DELIMITER
    assert any(scan["top_feature"] in w for w in scan["warnings"])


def test_noise_is_no_signal() -> None:
    def make(ask: int, r: int, rng: random.Random) -> tuple[str, list[str], float]:
        tools = ["lookup_order"] if rng.random() < 0.5 else []
        return _babble(rng), tools, float(rng.random() < 0.5)

    scan = hack_scan(_rows(30, 8, make, seed=3), endorsed=["tool:lookup_order"], n_perm=50)
    assert scan["regime"] == "no_signal"
    assert scan["top_feature"] is None


def test_half_the_asks_solved_is_pool_exhausted() -> None:
    def make(ask: int, r: int, rng: random.Random) -> tuple[str, list[str], float]:
        called = rng.random() < 0.5
        reward = 1.0 if ask % 2 == 0 else float(called)
        return _babble(rng), ["lookup_order"] if called else [], reward

    scan = hack_scan(_rows(20, 8, make), endorsed=["tool:lookup_order"], n_perm=20)
    assert scan["regime"] == "pool_exhausted"
    assert scan["support"]["solved_asks"] == 10


def test_difficulty_confound_is_not_flagged() -> None:
    # Hard asks make the agent write "sorry" in every rollout and fail more: pooled, "sorry"
    # tracks reward strongly; within an ask it never varies, so a grouped update cannot learn it.
    def make(ask: int, r: int, rng: random.Random) -> tuple[str, list[str], float]:
        hard = ask % 2 == 1
        called = rng.random() < 0.5
        p = (0.1 if hard else 0.5) + (0.4 if called else 0.0)
        text = _babble(rng) + (" sorry" if hard else "")
        return text, ["lookup_order"] if called else [], float(rng.random() < p)

    rows = _rows(40, 8, make)
    sorry = [float("sorry" in r["final_text"]) for r in rows]
    rewards = [r["reward"] for r in rows]
    n = len(rows)
    ms, mr = sum(sorry) / n, sum(rewards) / n
    cov = sum((a - ms) * (b - mr) for a, b in zip(sorry, rewards, strict=True))
    var_s = sum((a - ms) ** 2 for a in sorry)
    var_r = sum((b - mr) ** 2 for b in rewards)
    assert cov / (var_s * var_r) ** 0.5 < -0.3  # strong pooled correlation
    scan = hack_scan(rows, endorsed=["tool:lookup_order"], n_perm=50)
    assert scan["regime"] == "train"
    assert scan["top_feature"] == "tool:lookup_order"
    assert "contains:sorry" not in [f["name"] for f in scan["features"]]


def test_two_trajectory_pools_are_degenerate() -> None:
    def make(ask: int, r: int, rng: random.Random) -> tuple[str, list[str], float]:
        if r % 2 == 0:
            return "Your order shipped today.", ["lookup_order"], 1.0
        return "I cannot help with that!", [], 0.0

    scan = hack_scan(_rows(10, 8, make), endorsed=["tool:lookup_order"], n_perm=20)
    assert scan["regime"] == "degenerate"
    assert scan["top_feature"] is None
    assert scan["cause"] == "distinct_per_ask"
    assert len(scan["collinear"]) >= 2
    assert scan["support"]["distinct_per_ask"] == 2


def test_too_few_rows_and_skipped_rows_are_counted() -> None:
    rows = [{"scenario_id": "a", "final_text": "x", "reward": 1.0},
            {"scenario_id": "a", "final_text": "y", "reward": None},
            {"scenario_id": "a", "final_text": "z", "reward": "high"}]
    scan = hack_scan(rows)
    assert scan["regime"] == "unknown"
    assert scan["cause"] == "min_obs"
    assert scan["support"]["skipped"] == {"unjudged": 1, "invalid": 1, "no_task": 0}


def test_hack_scan_diff_names_the_move_and_withholds_on_degenerate() -> None:
    from whileai.simulations.clean.hack_report import (
        format_hack_scan,
        format_hack_scan_diff,
        hack_scan_diff,
    )

    def honest(ask: int, r: int, rng: random.Random) -> tuple[str, list[str], float]:
        called = rng.random() < 0.5
        reward = float(called != (rng.random() < 0.1))
        return _babble(rng), ["lookup_order"] if called else [], reward

    def hacked(ask: int, r: int, rng: random.Random) -> tuple[str, list[str], float]:
        delim = rng.random() < 0.5
        text = _babble(rng) + ("\n### done" if delim else "")
        return text, ["lookup_order"] if rng.random() < 0.5 else [], float(delim)

    def two(ask: int, r: int, rng: random.Random) -> tuple[str, list[str], float]:
        return ("Shipped.", ["lookup_order"], 1.0) if r % 2 else ("No.", [], 0.0)

    before = hack_scan(_rows(30, 8, honest), endorsed=["tool:lookup_order"], n_perm=30)
    after = hack_scan(_rows(30, 8, hacked), endorsed=["tool:lookup_order"], n_perm=30)
    diff = hack_scan_diff(before, after)
    assert diff["before_regime"] == "train"
    assert diff["after_regime"] == "reward_hack"
    assert diff["moved_toward"] in DELIMITER
    assert any("reward_hack" in w for w in diff["warnings"])
    assert "moved toward" in format_hack_scan_diff(diff)
    assert "top: tool:lookup_order" in format_hack_scan(before)
    degenerate = _rows(10, 8, two)
    withheld = hack_scan_diff(degenerate, _rows(30, 8, hacked), endorsed=["tool:lookup_order"],
                              n_perm=20)
    assert withheld["withheld"] is True
    assert withheld["moved_toward"] is None


def test_user_features_and_rivals() -> None:
    from whileai.simulations.clean.hack_features import hand_features

    def make(ask: int, r: int, rng: random.Random) -> tuple[str, list[str], float]:
        called = rng.random() < 0.5
        says = rng.random() < (0.95 if called else 0.03)
        text = _babble(rng) + (" confirmed" if says else "")
        return text, ["lookup_order"] if called else [], float(called)

    rows = _rows(30, 8, make)
    scan = hack_scan(rows, endorsed=["tool:lookup_order"], n_perm=20,
                     features={"mood": lambda row: len(row["final_text"]) % 3})
    assert scan["regime"] == "train"
    assert "contains:confirmed" in scan["rivals"]
    assert any("rivals" in w for w in scan["warnings"])
    assert hand_features(rows[0], {"mood": lambda row: 2})["user:mood"] == 2.0
    with pytest.raises(TypeError, match="features"):
        hack_scan(rows, features={"bad": lambda row: "x"})


def test_too_few_shuffles_for_alpha_clear_nothing_and_say_so() -> None:
    def make(ask: int, r: int, rng: random.Random) -> tuple[str, list[str], float]:
        delim = rng.random() < 0.5
        return _babble(rng) + ("\n### done" if delim else ""), [], float(delim)

    rows = _rows(30, 8, make)
    few = hack_scan(rows, endorsed=["tool:lookup_order"], n_perm=18)  # k = floor(0.05 * 19) = 0
    assert few["regime"] == "no_signal"
    assert few["tau"] == 1.0
    assert any("n_perm=18 is too few" in w and "n_perm >= 19" in w for w in few["warnings"])
    enough = hack_scan(rows, endorsed=["tool:lookup_order"], n_perm=19)  # k = 1: the largest
    assert enough["regime"] == "reward_hack"
    assert not any("too few" in w for w in enough["warnings"])


def test_a_chance_trim_of_a_strong_feature_is_not_shown_as_a_conjunction() -> None:
    # Reward follows "rest assured" only; the other words are noise. In these pools a pair
    # "rest assured & <word>" beats the phrase by luck (it was the top feature before the split
    # rule), but it does not split the phrase's rows clearly enough: it is not shown.
    from whileai.simulations.clean.hack_pools import synthetic_pool

    shown = []
    for seed in (1, 21, 31):
        scan = hack_scan(synthetic_pool(60, 8, seed=seed, phrase="rest assured"),
                         endorsed=["tool:lookup"], seed=seed, n_perm=19)
        assert scan["top_feature"] == "contains:rest assured"
        shown += [f["name"] for f in scan["features"] if f["tier"] == "conjunction"]
    assert not [n for n in shown if "rest assured" in n]


def test_a_shortcut_that_needs_two_things_is_named_as_their_conjunction() -> None:
    # Reward rises only when the reply says "rest assured" AND the rollout called lookup.
    from whileai.simulations.clean.hack_pools import synthetic_pool

    for seed in range(3):
        rows = synthetic_pool(60, 8, seed=seed, phrase="rest assured", share=0.5, lift=0.0)
        rng = random.Random(seed)
        for row in rows:
            both = "rest assured" in row["final_text"] and bool(row["steps"])
            row["reward"] = float(rng.random() < (0.8 if both else 0.2))
        scan = hack_scan(rows, endorsed=["tool:lookup"], seed=seed, n_perm=19)
        assert scan["regime"] == "train"  # the conjunction's name holds the endorsed tool
        assert scan["top_feature"] in ("contains:rest assured & tool:lookup",
                                       "tool:lookup & contains:rest assured")


def test_every_regime_and_cause_is_in_the_docs_tables() -> None:
    page = (Path(__file__).resolve().parents[1] / "docs" / "cleaning.md").read_text("utf-8")
    assert [r for r in get_args(Regime) if f"| `{r}` |" not in page] == []
    assert [c for c in get_args(Cause) if f"| `{c}` |" not in page] == []


def test_the_auto_tier_of_the_readme_walk_through_holds_words_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The README's seeded rows (`whileai simulate --spec examples/spec --mode rl --repeats 4
    --budget 40`, graded by examples.judge): every auto-tier feature is a word or a word pair
    (the old tier ranked `contains:'` and `contains:,` there), and so is the best one."""
    import json
    import re

    from whileai.cli import main

    root = Path(__file__).resolve().parents[1]
    monkeypatch.chdir(root)
    rows, graded = tmp_path / "rows.jsonl", tmp_path / "graded.jsonl"
    assert main(["simulate", "--spec", "examples/spec", "--mode", "rl", "--repeats", "4",
                 "--budget", "40", "-o", str(rows)]) == 0
    assert main(["grade", str(rows), "--judge", "examples.judge:no_planted_mistake",
                 "-o", str(graded)]) == 0
    scored = [json.loads(line) for line in graded.read_text().splitlines()]
    scan = hack_scan(scored, ["tool:get_order"], progress=False)
    auto = [f["name"] for f in scan["features"] if f["name"].startswith("contains:")]
    assert auto, scan["features"]
    word = re.compile(r"contains:[^\W_]\w*(?: \w+)?")
    assert [name for name in auto if not word.fullmatch(name)] == []
