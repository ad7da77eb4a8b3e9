"""`whileai traces report` and `whileai traces from-otel`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from whileai.cli import main

FIXTURES = Path(__file__).parent / "fixtures"


def test_traces_report_text_and_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    traces = tmp_path / "prod.jsonl"
    rows = [
        {"prompt": "where is 4412", "steps": [{"tool": "get_order", "arguments": {
            "order_id": "4412"}, "result": {"error": "timeout"}}], "reward": 0},
        {"prompt": "refund 9", "steps": [], "final_text": "done", "reward": 1},
    ]
    traces.write_text("\n".join(json.dumps(r) for r in rows) + "\n{broken\n", encoding="utf-8")
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps([{"name": "get_order"}, {"name": "refund"}]), encoding="utf-8")

    assert main(["traces", "report", str(traces), "--tools", str(tools)]) == 0
    out = capsys.readouterr().out
    assert "3 in, 2 kept, 1 dropped" in out
    assert "condition -> timeout" in out

    assert main(["traces", "report", str(traces), "--tools", str(tools), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["emphasis"] == {"tool": ["get_order"], "condition": ["timeout"]}
    assert report["skipped_lines"] == 1


def test_traces_report_missing_file_is_a_clean_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["traces", "report", str(tmp_path / "nope.jsonl")]) == 2
    assert "no such file" in capsys.readouterr().err


def test_from_otel_writes_rows(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "rows.jsonl"
    code = main(["traces", "from-otel", str(FIXTURES / "otel_semconv_tool_calls.json"),
                 "--output", str(out)])
    assert code == 0
    assert "1 row(s) from 1 conversation(s), 3 span(s)" in capsys.readouterr().out
    (row,) = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert row["prompt"] == "Weather in Paris?"
    assert row["steps"][0]["tool"] == "get_weather"
