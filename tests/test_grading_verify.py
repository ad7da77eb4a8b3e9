"""Verifiers: each honours the judge contract; CodeExec contains what it runs."""

from __future__ import annotations

import sys
from typing import Any

import pytest

from whileai.errors import ConfigError
from whileai.simulations.judge.judging import run_judge
from whileai.simulations.verify import (
    All,
    CodeExec,
    ExactMatch,
    Includes,
    JSONField,
    JSONSchema,
    JSONValid,
    MathEqual,
    MultipleChoice,
    Numeric,
    Regex,
    Weighted,
    verifier,
)
from whileai.simulations.verify import (
    Any as AnyOf,
)


def row(text: str, **extra: Any) -> dict[str, Any]:
    return {"prompt": "q", "final_text": text, **extra}


def reward(v: Any, r: dict[str, Any]) -> Any:
    return v(r)["reward"]


def test_gold_comes_from_privileged_then_flat_fields_then_field() -> None:
    v = ExactMatch()
    assert reward(v, row("42", privileged={"reference": "42"}, answer="7")) == 1.0
    assert reward(v, row("42", target="42")) == 1.0
    assert reward(ExactMatch(field="meta.gold"), row("42", meta={"gold": "42"})) == 1.0
    missing = run_judge([row("42")], ExactMatch()).rows[0]
    assert missing["judge_status"] == "missing_reward"
    assert "no gold" in missing["reason"]


def test_exact_and_includes() -> None:
    assert reward(ExactMatch(), row(" The  Answer. ", answer="the answer")) == 1.0
    assert reward(ExactMatch(case_sensitive=True), row("Paris", answer="paris")) == 0.0
    assert reward(ExactMatch(), row("b", answer=["a", "b"])) == 1.0
    assert reward(Includes(), row("order 4412 shipped", answer="4412")) == 1.0
    assert reward(Includes(["4412", "refund"], require="all"), row("4412 only")) == 0.0
    with pytest.raises(ConfigError):
        Includes(require="most")


def test_regex_and_multiple_choice() -> None:
    assert reward(Regex(r"\d{4}"), row("id 4412")) == 1.0
    assert reward(Regex(r"\d+", fullmatch=True), row("44 12")) == 0.0
    with pytest.raises(ConfigError, match="does not compile"):
        Regex("(")
    mc = MultipleChoice()
    assert reward(mc, row("I think the answer is B.", answer="B")) == 1.0
    assert reward(mc, row("(C) because ...", answer="(c)")) == 1.0
    assert reward(mc, row("Answer: D", answer="A")) == 0.0
    assert mc(row("no letter here at all 7", answer="A"))["reward"] == 0.0


@pytest.mark.parametrize(
    ("text", "gold", "expected"),
    [
        ("The total is $1,250.", "1250", 1.0),
        ("It is 3.14159", 3.14159, 1.0),
        ("about 0.5", "1/2", 1.0),
        ("It is 3", "4", 0.0),
        ("no number", "4", 0.0),
    ],
)
def test_numeric(text: str, gold: Any, expected: float) -> None:
    assert reward(Numeric(), row(text, answer=gold)) == expected


def test_numeric_with_a_non_numeric_gold_is_missing_not_zero() -> None:
    out = run_judge([row("4", answer="four")], Numeric()).rows[0]
    assert out["judge_status"] == "missing_reward"


@pytest.mark.parametrize(
    ("text", "gold", "expected"),
    [
        ("so \\boxed{\\frac{1}{2}}", "0.5", 1.0),
        ("\\boxed{\\dfrac{6}{8}}", "3/4", 1.0),
        ("The answer is 12,000.", "12000", 1.0),
        ("\\boxed{2\\sqrt{2}}", "\\sqrt{8}", 1.0),
        ("\\boxed{2^{10}}", "1024", 1.0),
        ("\\boxed{1/3}", "0.333", 0.0),
        ("\\boxed{7}", "8", 0.0),
        ("\\boxed{}", "8", 0.0),
    ],
)
def test_math_equal(text: str, gold: str, expected: float) -> None:
    assert reward(MathEqual(), row(text, answer=gold)) == expected


def test_json_verifiers() -> None:
    assert reward(JSONValid(), row('```json\n{"a": 1}\n```')) == 1.0
    assert reward(JSONValid(), row("{'a': 1}")) == 0.0
    schema = {
        "type": "object",
        "required": ["id", "items"],
        "additionalProperties": False,
        "properties": {
            "id": {"type": "integer", "minimum": 1},
            "items": {
                "type": "array",
                "items": {"type": "string", "enum": ["a", "b"]},
                "minItems": 1,
                "uniqueItems": True,
            },
            "note": {"anyOf": [{"type": "string", "maxLength": 5}, {"type": "null"}]},
        },
    }
    v = JSONSchema(schema)
    assert reward(v, row('{"id": 3, "items": ["a"], "note": null}')) == 1.0
    bad = v(row('{"id": 0, "items": ["a", "a", "c"], "extra": 1, "note": "toolong"}'))
    assert bad["reward"] == 0.0
    assert "additionalProperties" in bad["reason"]
    assert "(and 4 more)" in bad["reason"]
    assert JSONSchema({"type": "mystery"})(row("{}"))["reward"] is None
    f = JSONField("order.status")
    assert reward(f, row('{"order": {"status": "shipped"}}', answer="shipped")) == 1.0
    assert reward(JSONField("n", 2), row('{"n": 2.0}')) == 1.0
    assert reward(JSONField("n", 2), row('{"m": 2}')) == 0.0


def test_composition() -> None:
    both = All(Includes("4412"), Regex("shipped"))
    assert reward(both, row("4412 shipped")) == 1.0
    assert reward(both, row("4412 lost")) == 0.0
    either = AnyOf(Includes("4412"), Regex("shipped"))
    assert reward(either, row("it shipped")) == 1.0
    w = Weighted([(Includes("a"), 3), (Includes("b"), 1)])
    out = w(row("b"))
    assert out["reward"] == 0.25
    assert set(out["markers"]) == {"rubric:Includes"}
    # a part without a gold makes the whole unjudged, not zero
    assert All(ExactMatch(), Regex("x"))(row("x"))["reward"] is None
    with pytest.raises(ConfigError):
        Weighted([(Includes("a"), -1)])


def test_verifier_decorator_forms() -> None:
    @verifier
    def short(candidate: str) -> bool:
        return len(candidate) < 10

    @verifier(field="answer", name="starts")
    def starts(candidate: str, gold: str) -> tuple[float, str]:
        return float(candidate.startswith(gold)), "prefix check"

    assert reward(short, row("tiny")) == 1.0
    assert starts(row("abc", answer="ab")) == {
        "verifier": "starts",
        "reward": 1.0,
        "reason": "prefix check",
    }
    assert run_judge([row("abc")], starts).rows[0]["judge_status"] == "missing_reward"


def _no_sandbox() -> str | None:
    if not sys.platform.startswith("linux"):
        return "CodeExec's sandbox needs Linux namespaces"
    from whileai.simulations.judge.verify.sandbox import sandbox_status

    status = sandbox_status()
    return None if None in status.values() else f"no working sandbox: {status}"


needs_posix = pytest.mark.skipif(_no_sandbox() is not None, reason=str(_no_sandbox()))


@needs_posix
def test_code_exec_scores_the_share_of_tests_passed() -> None:
    v = CodeExec(["assert f(1) == 2", "assert f(2) == 3", "assert f(0) == 9"], timeout=5)
    out = v(row("```python\ndef f(x):\n    return x + 1\n```"))
    assert out["reward"] == pytest.approx(2 / 3)
    assert "2/3 tests passed" in out["reason"]


@needs_posix
@pytest.mark.parametrize(
    ("code", "why"),
    [
        ("while True:\n    pass", "timed out"),
        ("x = bytearray(2 * 1024 ** 3)", "MemoryError"),
        ("import os\nos._exit(3)", "crashed"),
        ("def f(:\n", "SyntaxError"),
        ("import sys\nwhile True:\n    sys.stdout.write('x' * 65536)", "File too large"),
    ],
)
def test_code_exec_contains_bad_programs(code: str, why: str) -> None:
    out = CodeExec("assert True", timeout=1.5, memory_mb=256, file_size_mb=1)(row(code))
    assert out["reward"] == 0.0
    assert why in out["reason"]


@needs_posix
def test_code_exec_sees_a_scrubbed_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SECRET_TOKEN", "hunter2")
    test = (
        "import os\nassert 'SECRET_TOKEN' not in os.environ\n"
        "assert os.getcwd() == os.environ['HOME']"
    )
    assert reward(CodeExec(test, timeout=5), row("x = 1")) == 1.0


@needs_posix
def test_code_exec_reads_hidden_tests_from_the_gold() -> None:
    r = row("def g():\n    return 5", privileged={"reference": {"tests": ["assert g() == 5"]}})
    assert reward(CodeExec(timeout=5), r) == 1.0
