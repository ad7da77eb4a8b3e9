"""Every recipe has the shape ``tools/run_recipes.py`` relies on, and recipes/README.md lists it.

The recipes themselves run in ``make recipes`` (seconds each); this only reads files.
"""

from __future__ import annotations

import functools
import importlib.util
import re
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]
RECIPES = ROOT / "recipes"
LISTED = re.compile(r"^- \[`(\d\d-[a-z0-9-]+/[a-z0-9-]+)`\]\(([^)]+)\) — \S")


@functools.cache
def _runner() -> ModuleType:
    """tools/run_recipes.py as a module (registered first: its dataclass needs that)."""
    spec = importlib.util.spec_from_file_location("run_recipes", ROOT / "tools" / "run_recipes.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("run_recipes", module)
    spec.loader.exec_module(module)
    return module


def _folders() -> list[Path]:
    return sorted(p for p in RECIPES.glob("*/*") if p.is_dir() and p.name != "__pycache__")


def test_there_are_recipes() -> None:
    assert _folders(), "recipes/<stage>/<name>/ folders are missing"


@pytest.mark.parametrize("folder", _folders(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_each_recipe_has_run_py_and_what_it_prints(folder: Path) -> None:
    assert (folder / "run.py").is_file()
    readme = (folder / "README.md").read_text(encoding="utf-8")
    expected = _runner().expected_lines(readme)
    assert expected, "the ```text block under '## What it prints' is empty"
    not_run = [line for line in readme.splitlines() if line.startswith("Not run in CI:")]
    assert len(not_run) <= 1
    if not_run:  # the part CI does not run is skipped out loud, and the README shows it
        assert [line for line in expected if "skipped" in line], \
            "a recipe with a 'Not run in CI:' line prints that it skipped that part, and why"


def test_readme_lists_each_recipe_once_and_nothing_else() -> None:
    lines = (RECIPES / "README.md").read_text(encoding="utf-8").splitlines()
    listed = [m.groups() for m in map(LISTED.match, lines) if m]
    assert [line for line in lines if line.startswith("- ") and not LISTED.match(line)] == []
    names = [name for name, _ in listed]
    assert [name for name, link in listed if link.rstrip("/") != name] == []
    assert len(names) == len(set(names)), "a recipe is listed twice"
    on_disk = {f"{p.parent.name}/{p.name}" for p in _folders()}
    assert sorted(on_disk - set(names)) == [], "add these to recipes/README.md"
    assert sorted(set(names) - on_disk) == [], "recipes/README.md lists folders that do not exist"


def test_the_runner_hides_credentials_and_the_network(monkeypatch: pytest.MonkeyPatch,
                                                     tmp_path: Path) -> None:
    monkeypatch.setenv("WHILEAI_API_KEY", "wai_secret")
    monkeypatch.setenv("HF_TOKEN", "hf_secret")
    env = _runner().recipe_env(tmp_path)
    assert "WHILEAI_API_KEY" not in env
    assert "HF_TOKEN" not in env
    assert env["WHILEAI_HOME"] == str(tmp_path)
    assert env["HTTPS_PROXY"].startswith("http://127.0.0.1:")
    assert "127.0.0.1" in env["NO_PROXY"]


def test_the_runner_checks_lines_in_order() -> None:
    runner = _runner()
    readme = "# r\n\n## What it prints\n\n```text\na  1\n\nb\n```\n\n## Next\n"
    assert runner.expected_lines(readme) == ["a  1", "b"]
    assert runner.first_missing(["a  1", "b"], "x\na  1   \nb\n") is None
    assert runner.first_missing(["a  1", "b"], "b\na  1\n") == "b"
    assert runner.first_missing(["a"], "a b\n") == "a"
    with pytest.raises(ValueError, match="What it prints"):
        runner.expected_lines("# r\n\n```text\na\n```\n")
    with pytest.raises(ValueError, match="text block"):
        runner.expected_lines("## What it prints\n\n## Other\n```text\na\n```\n")
