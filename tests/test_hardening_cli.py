"""The CLI's manners: help, -o, exit codes, Ctrl-C, warnings once, console notes (issue #26.8)."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import pytest

import whileai.simulations as zps
from _tools import TOOLS
from whileai._version import __version__
from whileai.cli import build_parser, main
from whileai.commands.manners import run_command


def _parsers(parser: argparse.ArgumentParser, name: str = "whileai"
             ) -> list[tuple[str, argparse.ArgumentParser]]:
    found = [(name, parser)]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub_name, sub in action.choices.items():
                found += _parsers(sub, f"{name} {sub_name}")
    return found


ALL = _parsers(build_parser())
WRITERS = ("whileai simulate", "whileai grade", "whileai decontaminate", "whileai optimize",
           "whileai export", "whileai traces from-otel", "whileai models grade",
           "whileai rows export")


@pytest.mark.parametrize(("name", "parser"), ALL, ids=[n for n, _ in ALL])
def test_every_command_has_an_example_and_every_option_help(
        name: str, parser: argparse.ArgumentParser) -> None:
    assert "example" in (parser.epilog or ""), f"{name} has no example"
    for action in parser._actions:
        if isinstance(action, (argparse._HelpAction, argparse._VersionAction,
                               argparse._SubParsersAction)):
            continue
        assert action.help, f"{name} {action.option_strings or action.dest} has no help"
        if action.option_strings and action.default not in (None, False, [], "==SUPPRESS=="):
            assert "default" in parser._get_formatter()._format_action(action), (
                f"{name} {action.option_strings} does not show its default")


@pytest.mark.parametrize("name", WRITERS)
def test_every_command_that_writes_takes_dash_o(name: str) -> None:
    parser = dict(ALL)[name]
    flags = {flag for action in parser._actions for flag in action.option_strings}
    assert {"-o", "--output"} <= flags


def test_short_version_flag(capsys: Any) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["-V"])
    assert exit_info.value.code == 0
    assert capsys.readouterr().out.strip() == f"whileai {__version__}"


@pytest.mark.parametrize("argv", [
    ["grade", "{missing}", "--verifier", "exact"],
    ["report", "{missing}"],
    ["export", "{missing}", "-o", "{out}"],
    ["rows", "check", "{missing}"],
    ["scan", "{missing}"],
    ["simulate", "--tools", "{missing}", "-o", "{out}"],
    ["decontaminate", "{rows}", "--against", "{rows}", "{missing}"],
    ["decontaminate", "{rows}", "--against", "{folder}"],
])
def test_a_missing_input_is_one_line_and_exit_2(argv: list[str], tmp_path: Path,
                                                capsys: Any) -> None:
    rows = tmp_path / "rows.jsonl"
    zps.write_jsonl(rows, [{"prompt": "where is my order 4412 please tell me now"}])
    names = {"missing": str(tmp_path / "nope.jsonl"), "out": str(tmp_path / "out.jsonl"),
             "rows": str(rows), "folder": str(tmp_path)}
    assert main([a.format(**names) for a in argv]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert "Traceback" not in err[0]
    assert ("nope.jsonl" in err[0]) or (str(tmp_path) in err[0])


def test_binary_tools_file_is_one_line(tmp_path: Path, capsys: Any) -> None:
    tools = tmp_path / "tools.json"
    tools.write_bytes(b"\xff\xfe\x00binary")
    assert main(["simulate", "--tools", str(tools), "--budget", "2",
                 "-o", str(tmp_path / "o.jsonl")]) == 2
    err = capsys.readouterr().err
    assert "tools.json: tools is not UTF-8 text" in err
    assert "Traceback" not in err


def test_defaults_used_are_named_on_the_console(tmp_path: Path, capsys: Any) -> None:
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps(TOOLS))
    assert main(["simulate", "--tools", str(tools), "-o", str(tmp_path / "a.jsonl"),
                 "--budget", "3"]) == 0
    err = capsys.readouterr().err
    assert "seeded agent" in err
    assert "budget" not in err
    assert main(["simulate", "--tools", str(tools), "-o", str(tmp_path / "b.jsonl"),
                 "--agent", "seeded"]) == 0
    err = capsys.readouterr().err
    assert "budget 1000 rows (the default" in err
    assert "seeded agent" not in err


class _Interrupting:
    def __init__(self, after: int) -> None:
        self.after, self.calls = after, 0

    def run(self, situation: Any, *, world: Any, seed: int) -> dict[str, Any]:
        self.calls += 1
        if self.calls > self.after:
            raise KeyboardInterrupt
        return {"steps": [], "final_text": "ok"}


def test_ctrl_c_exits_130_and_says_how_many_rows_landed(
        tmp_path: Path, capsys: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps(TOOLS))
    monkeypatch.setattr(zps, "seeded_agent", lambda *a, **k: _Interrupting(4))
    out = tmp_path / "rows.jsonl"
    assert main(["simulate", "--tools", str(tools), "--budget", "20", "-o", str(out)]) == 130
    err = capsys.readouterr().err
    assert f"interrupted; 4 row(s) landed in {out}" in err
    assert len(zps.load_rows(out)) == 4


def test_an_agent_that_never_succeeds_exits_1_with_a_reason(
        tmp_path: Path, capsys: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps(TOOLS))

    class Broken:
        def run(self, situation: Any, *, world: Any, seed: int) -> dict[str, Any]:
            raise ConnectionError("endpoint down")

    monkeypatch.setattr(zps, "seeded_agent", lambda *a, **k: Broken())
    assert main(["simulate", "--tools", str(tools), "--budget", "3",
                 "-o", str(tmp_path / "r.jsonl")]) == 1
    err = capsys.readouterr().err
    assert "the agent failed every rollout" in err
    assert "endpoint down" in err


def test_grading_nothing_says_so_and_exits_1(tmp_path: Path, capsys: Any) -> None:
    rows = tmp_path / "rows.jsonl"
    zps.write_jsonl(rows, [{"prompt": f"q{i}", "final_text": "a"} for i in range(5)])
    assert main(["grade", str(rows), "--verifier", "exact", "-o",
                 str(tmp_path / "g.jsonl")]) == 1
    err = capsys.readouterr().err
    assert "no row could be judged (5 unjudged)" in err


def test_warnings_print_once_without_a_source_line(capsys: Any) -> None:
    def noisy(args: argparse.Namespace) -> int:
        for _ in range(3):
            warnings.warn("the same thing", UserWarning, stacklevel=1)
        return 0

    assert run_command(argparse.Namespace(command="x", func=noisy)) == 0
    err = capsys.readouterr().err
    assert err == "whileai: warning: the same thing\n"


def test_an_unexpected_error_is_one_line_exit_1(capsys: Any) -> None:
    def bug(args: argparse.Namespace) -> int:
        raise ZeroDivisionError("oops")

    assert run_command(argparse.Namespace(command="x", func=bug)) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "internal error (ZeroDivisionError: oops)" in err


def test_the_installed_entry_point_prints_one_line_for_a_missing_file(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "whileai", "report", str(tmp_path / "x.jsonl")],
                          capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1
    assert "Traceback" not in proc.stderr


def test_a_usage_error_is_one_line_and_exit_2(capsys: Any) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["decontaminate", "--against", "eval.jsonl", "nope.jsonl"])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert err == ("whileai decontaminate: the following arguments are required: train; "
                   "see `whileai decontaminate --help`\n")
