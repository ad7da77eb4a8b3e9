"""The README's command-line walk-through runs as written, against the files in examples/."""

from __future__ import annotations

import re
import shlex
import shutil
from pathlib import Path
from typing import Any

import pytest

from whileai.cli import main

ROOT = Path(__file__).resolve().parents[1]
MARKER = "<!-- cli-walkthrough"


def _walkthrough() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"```bash\n(.*?)```", text[text.index(MARKER):], re.S)
    assert block is not None, "the README walk-through has no bash block"
    return [line for line in block.group(1).splitlines() if line.strip()]


def test_the_readme_walkthrough_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                     capsys: Any) -> None:
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    monkeypatch.chdir(tmp_path)
    lines = _walkthrough()
    assert len(lines) >= 8
    for line in lines:
        command, _, comment = line.partition("#")
        argv = shlex.split(command)
        assert argv[0] == "whileai"
        expected = 1 if comment.strip().startswith("exit 1") else 0
        assert main(argv[1:]) == expected, f"{line}\n{capsys.readouterr().err}"
        out = capsys.readouterr().out
        if "resumes" in comment:
            assert "wrote 0 rows" in out
    assert (tmp_path / "dataset" / "README.md").is_file()
    assert (tmp_path / "sft.jsonl").stat().st_size > 0
