"""Every ```python block in README.md and docs/*.md runs on its own, or continues the one above.

A block runs in a fresh namespace and a fresh working directory, so a reader can paste it alone.
A block whose first line is exactly ``# continues the block above`` runs in the namespace and
directory of the block before it instead: the one line a reader needs to know what to paste first.
"""

from __future__ import annotations

import re
import warnings
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
# Pages whose examples talk to the platform (skipped when the server extra is missing).
NEEDS_SERVER = {"platform.md", "viewer.md"}
# Pages whose examples need a Ray cluster (the session's local one; skipped without the ray
# extra and under WHILEAI_PURE=1, like the other Ray tests).
NEEDS_RAY = {"scale.md"}
BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)
CONTINUES = "# continues the block above"


@dataclass(frozen=True)
class Example:
    """One runnable unit of a page: a block and the blocks that continue it."""

    page: Path
    first: int  # index of the first block on its page
    blocks: tuple[str, ...]

    @property
    def name(self) -> str:
        last = self.first + len(self.blocks) - 1
        span = f"{self.first}" if last == self.first else f"{self.first}-{last}"
        return f"{self.page.name}[{span}]"


def _blocks(path: Path) -> list[str]:
    return BLOCK.findall(path.read_text(encoding="utf-8"))


def _examples(path: Path) -> list[Example]:
    """Group a page's blocks into examples: each starts fresh unless it says it continues."""
    groups: list[tuple[int, list[str]]] = []
    for i, block in enumerate(_blocks(path)):
        continues = block.split("\n", 1)[0].strip() == CONTINUES
        if continues and not groups:
            raise ValueError(f"{path.name} block {i}: says it continues but is the page's first")
        if continues:
            groups[-1][1].append(block)
        else:
            groups.append((i, [block]))
    return [Example(path, first, tuple(blocks)) for first, blocks in groups]


EXAMPLES = [example for page in DOCS for example in _examples(page)]


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda e: e.name)
def test_doc_example_runs(example: Example, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                          request: pytest.FixtureRequest) -> None:
    monkeypatch.chdir(tmp_path)
    if example.page.name in NEEDS_SERVER:  # a real `whileai serve` and a fresh account's key
        server = request.getfixturevalue("platform_server")
        monkeypatch.setenv("WHILEAI_BASE_URL", server.url)
        monkeypatch.setenv("WHILEAI_API_KEY", server.key(f"docs-{tmp_path.name}"))
    if example.page.name in NEEDS_RAY:
        request.getfixturevalue("ray")
        # Ray leaves its log files and helper-process handles to the GC: not this page's.
        warnings.simplefilter("ignore", ResourceWarning)
    namespace: dict[str, object] = {"__name__": f"doc_{example.page.stem}"}
    for offset, block in enumerate(example.blocks):
        label = f"{example.page.name} block {example.first + offset}"
        try:
            exec(compile(block, label, "exec"), namespace)
        except Exception as exc:  # name the block so a broken example is easy to find
            pytest.fail(f"{label} raised {type(exc).__name__}: {exc}\n{block}")


def test_docs_have_examples() -> None:
    assert EXAMPLES, "no runnable examples found in README.md or docs/"


def test_a_continuing_block_follows_another() -> None:
    assert all(not e.blocks[0].startswith(CONTINUES) for e in EXAMPLES)
