"""Every ```python block in README.md and docs/*.md runs, in order, one namespace per file."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
# Pages whose examples talk to the platform (skipped when the server extra is missing).
NEEDS_SERVER = {"platform.md"}
BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)


def _blocks(path: Path) -> list[str]:
    return BLOCK.findall(path.read_text(encoding="utf-8"))


@pytest.mark.parametrize("path", [p for p in DOCS if _blocks(p)], ids=lambda p: p.name)
def test_doc_examples_run(path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                          request: pytest.FixtureRequest) -> None:
    monkeypatch.chdir(tmp_path)
    if path.name in NEEDS_SERVER:  # a real `whileai serve` and a fresh account's key
        server = request.getfixturevalue("platform_server")
        monkeypatch.setenv("WHILEAI_BASE_URL", server.url)
        monkeypatch.setenv("WHILEAI_API_KEY", server.key(f"docs-{tmp_path.name}"))
    namespace: dict[str, object] = {"__name__": f"doc_{path.stem}"}
    for i, block in enumerate(_blocks(path)):
        try:
            exec(compile(block, f"{path.name}[block {i}]", "exec"), namespace)
        except Exception as exc:  # name the block so a broken example is easy to find
            pytest.fail(f"{path.name} block {i} raised {type(exc).__name__}: {exc}\n{block}")


def test_docs_have_examples() -> None:
    assert any(_blocks(p) for p in DOCS), "no runnable examples found in README.md or docs/"
