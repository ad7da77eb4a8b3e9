"""Module paths the product documents name, kept as aliases of where the code lives.

The documents were written before the tree showed its layers; they name
``whileai.simulations.score.grade_llm`` (for ``warm_judge``), ``score.judging`` (the judge
contract), ``score.markers`` and ``score.style`` (behaviour markers) and
``whileai.simulations.schema`` (``Task``, ``Rollout``, ``Judgment``, ``Marker``). Each of those
paths imports the real module itself (the same object, so no state is split in two); this table
is the only place such a path exists. ``whileai.simulations.verify`` is a public module of its
own, not an alias.

>>> import whileai.simulations.score.judging as documented
>>> import whileai.simulations.judge.judging as real
>>> documented is real
True
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
from collections.abc import Sequence
from types import ModuleType

__all__ = ["ALIASES", "install"]

ALIASES: dict[str, str] = {
    "whileai.simulations.score": "whileai.simulations.judge",
    "whileai.simulations.score.grade_llm": "whileai.simulations.judge.warm",
    "whileai.simulations.score.judging": "whileai.simulations.judge.judging",
    "whileai.simulations.score.markers": "whileai.simulations.clean.markers",
    "whileai.simulations.score.style": "whileai.simulations.clean.style",
    "whileai.simulations.schema": "whileai.rows.schema",
}


class _AliasFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Answers the documented paths with the real modules (first on ``sys.meta_path``, so the
    path finder never loads a second copy of a module under its alias name)."""

    def find_spec(self, fullname: str, path: Sequence[str] | None,
                  target: ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        if fullname not in ALIASES:
            return None
        return importlib.util.spec_from_loader(fullname, self)

    def __init__(self) -> None:
        self._own: dict[str, importlib.machinery.ModuleSpec | None] = {}

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        real = importlib.import_module(ALIASES[spec.name])
        self._own[real.__name__] = real.__spec__
        return real

    def exec_module(self, module: ModuleType) -> None:
        # the import system stamped the alias's spec on the real module: give it back its own
        module.__spec__ = self._own[module.__name__]


def install() -> None:
    """Put the alias finder first on ``sys.meta_path`` (once)."""
    if not any(isinstance(f, _AliasFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, _AliasFinder())
