"""MathEqual on math-verify: each construct both ways, the knobs, the reason, timeouts, no extra."""

from __future__ import annotations

import sys
from typing import Any

import pytest

from whileai.errors import ConfigError
from whileai.simulations.judge.judging import run_judge
from whileai.simulations.verify import MathEqual

pytest.importorskip("math_verify")


def judged(text: str, gold: Any, verifier: MathEqual | None = None) -> dict[str, Any]:
    return (verifier or MathEqual())({"prompt": "q", "final_text": text, "answer": gold})


# (reply, gold, verdict): each construct once equal and once not.
CASES = [
    # fractions and boxed answers
    ("so \\boxed{\\dfrac{3}{4}}", "\\frac34", 1.0),
    ("so \\boxed{\\dfrac{3}{5}}", "\\frac34", 0.0),
    ("so \\boxed{\\frac{1}{2}}", "0.5", 1.0),
    ("\\boxed{1/3}", "0.333", 0.0),
    # the last boxed answer wins over numbers in the working
    ("3 + 4 = 7, so \\boxed{8}", "8", 1.0),
    ("3 + 5 = 8, so \\boxed{7}", "8", 0.0),
    # symbolic expressions
    ("\\boxed{(x+1)^2}", "x^2+2x+1", 1.0),
    ("\\boxed{x^2+1}", "(x+1)^2", 0.0),
    ("\\boxed{2\\sqrt{2}}", "\\sqrt{8}", 1.0),
    ("\\boxed{2\\sqrt{3}}", "\\sqrt{8}", 0.0),
    # percentages
    ("\\boxed{10\\%}", "0.1", 1.0),
    ("\\boxed{20\\%}", "0.1", 0.0),
    # sets: order does not matter, members do
    ("\\{1, 2\\}", "\\{2, 1\\}", 1.0),
    ("The set is $\\{1, 3\\}$.", "\\{2, 1\\}", 0.0),
    # intervals: membership statements and the bracket kind
    ("x \\in [0, 1)", "[0,1)", 1.0),
    ("$[0, 1]$", "[0,1)", 0.0),
    # equations
    ("\\boxed{x=2}", "2", 1.0),
    ("$y = 2x+1$", "y=1+2x", 1.0),
    ("$y = 2x+2$", "y=1+2x", 0.0),
    # tuples keep their order
    ("$(1, 2)$", "(1,2)", 1.0),
    ("$(2, 1)$", "(1, 2, 3)", 0.0),
    # plain text answers
    ("The answer is 12,000.", "12000", 1.0),
    ("It is 3", "4", 0.0),
    ("$0.3333333$", "\\frac13", 1.0),
    ("$3.14$", "\\pi", 0.0),
]


@pytest.mark.parametrize(("text", "gold", "expected"), CASES)
def test_math_equal_constructs(text: str, gold: str, expected: float) -> None:
    out = judged(text, gold)
    assert out["reward"] == expected, out["reason"]


def test_agreement_on_the_case_table() -> None:
    hits = sum(judged(text, gold)["reward"] == want for text, gold, want in CASES)
    assert hits == len(CASES)


def test_reason_names_what_was_extracted_on_each_side() -> None:
    out = judged("we get \\boxed{\\dfrac{3}{4}}", "0.75")
    assert out["reward"] == 1.0
    assert out["reason"].startswith("equal: answer 3/4")
    assert "\\frac{3}{4}" in out["reason"]
    assert "gold 0.75" in out["reason"]
    assert "not equal: answer 7" in judged("\\boxed{7}", "8")["reason"]


def test_no_answer_in_the_reply_is_zero_and_an_unparseable_gold_is_unjudged() -> None:
    empty = judged("\\boxed{}", "8")
    assert empty["reward"] == 0.0
    assert "no final answer" in empty["reason"]
    assert "gold 8" in empty["reason"]
    unjudged = judged("\\boxed{5}", "the larger one")
    assert unjudged["reward"] is None
    assert "nothing to compare in the gold" in unjudged["reason"]


def test_math_equal_never_evaluates_arbitrary_code() -> None:
    assert judged("\\boxed{__import__('os').getcwd()}", "1")["reward"] == 0.0


def test_knobs_precision_rel_tol_strict_field_name() -> None:
    assert judged("\\boxed{0.3334}", "1/3")["reward"] == 0.0
    assert judged("\\boxed{0.3334}", "1/3", MathEqual(float_rounding=3))["reward"] == 1.0
    assert judged("\\boxed{1000001}", "1000000")["reward"] == 0.0
    assert judged("\\boxed{1000001}", "1000000", MathEqual(rel_tol=1e-5))["reward"] == 1.0
    assert judged("\\boxed{y+1}", "x+1")["reward"] == 0.0
    assert judged("\\boxed{y+1}", "x+1", MathEqual(strict=False))["reward"] == 1.0
    row = {"final_text": "\\boxed{4}", "meta": {"gold": "4"}, "answer": "5"}
    assert MathEqual(field="meta.gold")(row)["reward"] == 1.0
    assert MathEqual(name="math")(row)["verifier"] == "math"
    for bad in ({"rel_tol": -1}, {"float_rounding": 0}, {"timeout": 0}, {"timeout": 1.5},
                {"numeric_precision": True}):
        with pytest.raises(ConfigError):
            MathEqual(**bad)


def test_runs_in_a_worker_thread_where_the_signal_timeout_cannot() -> None:
    rows = [{"final_text": "\\boxed{\\frac{1}{2}}", "answer": "0.5"},
            {"final_text": "\\boxed{3}", "answer": "0.5"}]
    out = run_judge(rows, MathEqual(), workers=2, timeout=60).rows
    assert [r["reward"] for r in out] == [1.0, 0.0]
    assert [r["judge_status"] for r in out] == ["ok", "ok"]


def test_a_library_timeout_is_unjudged_not_zero(monkeypatch: pytest.MonkeyPatch) -> None:
    import math_verify
    from math_verify.errors import TimeoutException

    def slow(*args: Any, **kwargs: Any) -> bool:
        raise TimeoutException("Operation timed out!")

    monkeypatch.setattr(math_verify, "verify", slow)
    out = judged("\\boxed{x^2}", "x^2", MathEqual(timeout=2))
    assert out["reward"] is None
    assert "timed out" in out["reason"]
    assert "2s" in out["reason"]


def test_without_the_extra_construction_names_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "math_verify", None)
    with pytest.raises(ImportError, match=r"pip install 'whileai\[math\]'"):
        MathEqual()
