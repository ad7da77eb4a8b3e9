"""Fuzz the CLI's file inputs: whatever the file holds, no traceback escapes (issue #26).

Each command that reads a file gets random bytes, malformed JSON, deep nesting, rows with odd
values, a folder or a missing path; it must exit 0, 1 or 2 with no traceback and no "internal
error" (the CLI's line for an unexpected exception) on stderr.
"""

from __future__ import annotations

import contextlib
import io
import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from whileai.cli import main

COMMANDS = {
    "grade": ["grade", "{f}", "--verifier", "exact", "-o", "{out}"],
    "report": ["report", "{f}"],
    "export": ["export", "{f}", "-o", "{out}"],
    "export-hf": ["export", "{f}", "--kind", "hf", "-o", "{dir}"],
    "export-preference": ["export", "{f}", "--kind", "preference", "-o", "{out}"],
    "export-environment": ["export", "{f}", "--kind", "environment", "-o", "{dir}"],
    "rows-check": ["rows", "check", "{f}"],
    "rows-export": ["rows", "export", "{f}", "-o", "{out}"],
    "scan": ["scan", "{f}", "--n-perm", "3"],
    "optimize": ["optimize", "{f}", "-o", "{out}"],
    "optimize-sft": ["optimize", "{f}", "--mode", "sft"],
    "decontaminate": ["decontaminate", "{f}", "--against", "{f}"],
    "traces-report": ["traces", "report", "{f}"],
    "from-otel": ["traces", "from-otel", "{f}", "-o", "{out}"],
    "logprobs": ["models", "logprobs", "{f}"],
    "simulate-tools": ["simulate", "--tools", "{f}", "--budget", "2", "-o", "{out}"],
    "simulate-spec": ["simulate", "--spec", "{f}", "--budget", "2", "-o", "{out}"],
    "export-tools": ["export", "{good}", "--tools", "{f}", "-o", "{out}"],
    "traces-policy": ["traces", "report", "{good}", "--policy", "{f}"],
}

scalars = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.floats(allow_nan=False),
                    st.text(max_size=6))
values = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=5), inner, max_size=3)),
    max_leaves=8)
ROW_KEYS = ["prompt", "final_text", "reward", "steps", "messages", "scenario_id",
            "rollout_index", "judge_status", "scenario_dimensions", "task_id", "answer",
            "faults", "world_state", "chosen", "rejected", "resourceSpans", "tools", "policy",
            "logprob", "ref_logprob", "model_version"]
rows = st.dictionaries(st.sampled_from(ROW_KEYS), values, max_size=6)
jsonl = st.lists(rows, max_size=5).map(
    lambda rs: "".join(json.dumps(r) + "\n" for r in rs).encode())
deep = st.integers(150, 3000).map(
    lambda n: ('{"prompt": "a", "x": ' + "[" * n + "]" * n + "}\n").encode())
deep_text = st.integers(150, 3000).map(
    lambda n: json.dumps({"prompt": "a", "final_text": "b", "steps": [
        {"tool": "t", "arguments": "[" * n + "]" * n}]}).encode() + b"\n")
malformed = st.sampled_from([b"{", b'{"prompt": "a"', b"[1, 2]\n", b"null\n", b'"text"\n',
                             b"\xef\xbb\xbf{}\n", b'{"prompt": NaN}\n', b"{}\n{}\n{\n",
                             b'{"reward": Infinity, "prompt": "p"}\n', b"\x00\x01\x02"])
contents = st.one_of(st.binary(max_size=64), jsonl, deep, deep_text, malformed,
                     st.text(max_size=40).map(str.encode),
                     st.sampled_from(["<missing>", "<folder>"]))


def _run(argv: list[str]) -> tuple[int, str]:
    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as exc:  # argparse usage errors
            code = int(exc.code or 0)
    return code, err.getvalue()


@pytest.mark.parametrize("command", sorted(COMMANDS))
@settings(max_examples=12, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(content=contents)
def test_no_traceback_escapes_the_cli(command: str, content: Any) -> None:
    with tempfile.TemporaryDirectory() as folder:
        base = Path(folder)
        target = base / "input.jsonl"
        if content == "<folder>":
            target.mkdir()
        elif content != "<missing>":
            target.write_bytes(content)
        good = base / "good.jsonl"
        good.write_text('{"prompt": "hi", "final_text": "hello"}\n')
        names = {"f": str(target), "out": str(base / "out.jsonl"), "dir": str(base / "ds"),
                 "good": str(good)}
        code, err = _run([a.format(**names) for a in COMMANDS[command]])
    assert code in (0, 1, 2), (code, err)
    assert "Traceback" not in err, err
    assert "internal error" not in err, err
