"""Deprecated alias: ``zeroproof`` is now ``whileai``. Import ``whileai`` instead.

``import zeroproof`` returns the ``whileai`` module itself, and every submodule name under it
(``zeroproof.simulations``, ``zeroproof.rows.schema``, ...) resolves to the same module
object as its ``whileai`` counterpart, so classes, pickles and ``isinstance`` checks agree.
The older top-level ``zeroproof_simulations`` maps to ``whileai.simulations`` the same way.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import warnings
from collections.abc import Sequence
from types import ModuleType

# Old name prefix -> new name prefix, for every module below the old top-level names.
ALIASES = {"zeroproof": "whileai", "zeroproof_simulations": "whileai.simulations"}


def _target(fullname: str) -> str | None:
    for old, new in ALIASES.items():
        if fullname.startswith(old + "."):
            return new + fullname[len(old):]
    return None


class _AliasFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Serve ``zeroproof.x`` as the already-importable ``whileai.x`` (no second copy)."""

    zeroproof_alias = True  # found again by this marker if the package is imported anew

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        new = _target(fullname)
        if new is None or importlib.util.find_spec(new) is None:
            return None
        return importlib.util.spec_from_loader(fullname, self)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        new = _target(spec.name)
        assert new is not None
        module = importlib.import_module(new)
        spec.loader_state = module.__spec__  # the import system overwrites __spec__ next
        return module

    def exec_module(self, module: ModuleType) -> None:
        """Nothing to run (the target ran under its own name); give it back its own spec."""
        alias_spec = module.__spec__
        if alias_spec is not None and alias_spec.loader is self:
            module.__spec__ = alias_spec.loader_state


if not any(getattr(finder, "zeroproof_alias", False) for finder in sys.meta_path):
    sys.meta_path.insert(0, _AliasFinder())

warnings.warn(
    "the `zeroproof` package is now `whileai`: replace `import zeroproof` with `import whileai` "
    "(and `zeroproof.simulations` with `whileai.simulations`); the old name will be removed.",
    DeprecationWarning,
    stacklevel=2,
)

import whileai  # noqa: E402 - after the warning, so the alias is announced first

sys.modules[__name__] = whileai
