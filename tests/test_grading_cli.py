"""``whileai grade`` and ``whileai report`` end to end on JSONL files under tmp_path."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from _files import write_jsonl
from whileai.cli import main


def rows_with_answers() -> list[dict]:
    return [
        {
            "task_id": f"t{t}",
            "rollout_index": i,
            "prompt": f"what is {t}+{t}?",
            "final_text": str(2 * t if (t + i) % 3 else 0),
            "answer": str(2 * t),
        }
        for t in range(1, 6)
        for i in range(4)
    ]


def test_grade_with_a_verifier_then_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = write_jsonl(tmp_path / "rows.jsonl", rows_with_answers())
    out = tmp_path / "graded.jsonl"
    assert (
        main(["grade", str(src), "--verifier", "exact", "--field", "answer", "-o", str(out)]) == 0
    )
    printed = capsys.readouterr().out
    assert "20 rows:" in printed
    assert "pass@1" in printed
    graded = [json.loads(line) for line in out.read_text().splitlines()]
    assert {r["judge_name"] for r in graded} == {"ExactMatch"}
    assert sum(r["reward"] for r in graded) == sum(
        1 for r in rows_with_answers() if r["final_text"] == r["answer"]
    )
    assert main(["report", str(out)]) == 0
    text = capsys.readouterr().out
    assert text.startswith("pass@1 ")
    assert "(5 groups, k=4)" in text
    assert "pass@1 95% CI [" in text
    assert "judge status: ok 20" in text
    assert main(["report", str(out), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["judge_status"]["ok"] == 20
    assert data["pass_at"]["k"] == 4


def test_grade_with_an_importable_judge(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "my_judges.py").write_text(
        "def rating(row):\n    return 5 if row['final_text'] != '0' else 1\n"
    )
    monkeypatch.chdir(tmp_path)
    src = write_jsonl(tmp_path / "rows.jsonl", rows_with_answers())
    code = main(["grade", str(src), "--judge", "my_judges:rating", "--scale", "1,5"])
    assert code == 0
    graded = [json.loads(x) for x in (tmp_path / "rows.graded.jsonl").read_text().splitlines()]
    assert {r["reward"] for r in graded} <= {0.0, 1.0}
    assert {r["rating"] for r in graded} <= {1.0, 5.0}


def test_bad_judge_spec_is_a_clear_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = write_jsonl(tmp_path / "rows.jsonl", rows_with_answers())
    assert main(["grade", str(src), "--judge", "no_such_module_xyz:f"]) == 2
    assert "cannot import" in capsys.readouterr().err
    assert main(["grade", str(src), "--judge", "nocolon"]) == 2
    assert "module:attr" in capsys.readouterr().err


def test_report_on_ungraded_rows_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = write_jsonl(tmp_path / "rows.jsonl", [{"prompt": "p", "final_text": "x"}])
    assert main(["report", str(src)]) == 0
    text = capsys.readouterr().out
    assert "pass@1 n/a" in text
    assert "1 unjudged rows" in text
    assert "ungraded 1" in text
