"""The API reference covers the public surface, and the site's navigation lists every page.

``make docs`` builds the site with ``mkdocs build --strict`` (broken links and references fail
there); these checks run with the tests and need no MkDocs.
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

import whileai.simulations as zps

ROOT = Path(__file__).resolve().parents[1]
API = ROOT / "docs" / "api"
DIRECTIVE = re.compile(r"^::: (\S+)$", re.M)


def _documented() -> dict[str, list[str]]:
    """Public name -> the API pages whose ``::: whileai.simulations.<name>`` render it."""
    found: dict[str, list[str]] = {}
    for page in sorted(API.glob("*.md")):
        for target in DIRECTIVE.findall(page.read_text(encoding="utf-8")):
            name = target.removeprefix("whileai.simulations.")
            if "." not in name:
                found.setdefault(name, []).append(page.name)
    return found


def test_every_public_name_is_on_exactly_one_api_page() -> None:
    documented = _documented()
    missing = sorted(set(zps.__all__) - set(documented))
    assert missing == [], "add these to a page under docs/api/"
    assert sorted(set(documented) - set(zps.__all__)) == []
    assert {n: p for n, p in documented.items() if len(p) > 1} == {}


def test_the_nav_lists_every_page() -> None:
    config = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    pages = [p.relative_to(ROOT / "docs").as_posix() for p in (ROOT / "docs").rglob("*.md")]
    assert pages
    assert [p for p in pages if f": {p}\n" not in config] == []


def test_doctest_blocks_become_code_fences() -> None:
    pytest.importorskip("griffe")  # the docs extra
    spec = importlib.util.spec_from_file_location("griffe_doctests",
                                                  ROOT / "tools" / "griffe_doctests.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    text = 'Pick.\n\n>>> row["reward"]\n1.0\n\nArgs:\n    x: a value.\n\n    >>> f(1)\n    2'
    assert module.fence_doctests(text).splitlines() == [
        "Pick.", "", "```pycon", '>>> row["reward"]', "1.0", "```", "", "Args:",
        "    x: a value.", "", "    ```pycon", "    >>> f(1)", "    2", "    ```"]
    fenced = "```python\n>>> 1\n```"
    assert module.fence_doctests(fenced) == fenced  # already code: left alone


SIMULATIONS = ROOT / "python" / "whileai" / "simulations"


def _table_column(text: str, heading: str, column: int) -> list[str]:
    """The backticked paths in one column of the first table under ``heading``."""
    lines = text.split(heading, 1)[1].splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("|"))
    end = next((i for i in range(start, len(lines)) if not lines[i].startswith("|")), len(lines))
    cells = [row.split("|")[column + 1] for row in lines[start + 2:end]]
    return [p for cell in cells for p in re.findall(r"`([^`]+)`", cell)]


def _exists(path: str) -> bool:
    bases = (SIMULATIONS, ROOT / "python" / "whileai", ROOT / "python", ROOT)
    return any((base / path.rstrip("/")).exists() for base in bases)


@pytest.mark.parametrize(("page", "heading", "column"), [
    ("README.md", "## What is where", 2),
    ("docs/contributing.md", "## Where things live", 1),
])
def test_the_folder_maps_agree_with_the_tree(page: str, heading: str, column: int) -> None:
    named = _table_column((ROOT / page).read_text(encoding="utf-8"), heading, column)
    assert named
    assert [p for p in named if not _exists(p)] == []
    folders = sorted(f"{p.parent.name}/" for p in SIMULATIONS.glob("*/__init__.py"))
    assert [f for f in folders if f not in named] == []
