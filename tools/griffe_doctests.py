"""A griffe extension for the API reference: ``>>>`` examples render as code.

The docstrings keep their examples as plain doctest blocks (``python -m doctest`` and the tests run
them); Markdown would read ``row["reward"]`` in them as a link. This wraps each run of ``>>>`` /
``...`` lines and their output (up to a blank line) in a ``pycon`` fence before mkdocstrings
renders the docstring. Wired in ``mkdocs.yml`` (``extensions: [tools/griffe_doctests.py]``).
"""

from __future__ import annotations

from typing import Any

import griffe


def fence_doctests(text: str) -> str:
    r"""Return ``text`` with every doctest block inside a fenced ``pycon`` code block.

    >>> fence_doctests("Add.\n>>> 1 + 1\n2").splitlines()
    ['Add.', '```pycon', '>>> 1 + 1', '2', '```']
    """
    out: list[str] = []
    indent: str | None = None
    in_fence = False
    for line in text.splitlines():
        stripped = line.lstrip()
        if stripped.startswith("```"):
            in_fence = not in_fence
        if indent is None and not in_fence and stripped.startswith(">>>"):
            indent = line[: len(line) - len(stripped)]
            out.append(f"{indent}```pycon")
        elif indent is not None and not stripped:
            out.append(f"{indent}```")
            indent = None
        out.append(line)
    if indent is not None:
        out.append(f"{indent}```")
    return "\n".join(out)


class FenceDoctests(griffe.Extension):
    """Fence the doctest blocks of every docstring griffe loads."""

    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = fence_doctests(obj.docstring.value)
