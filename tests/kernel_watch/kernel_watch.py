"""Watch the reads of ``whileai._backend``'s backend-dependent names (tests/kernel_reach.py).

``WHILEAI_PURE=1`` changes only what ``whileai._backend`` serves: the kernels and the names
that say which backend serves them. ``watch`` turns the module into one whose reads of those
names call ``on_read(name)`` (its class swapped for a subclass: every caller keeps the same
module object); ``install`` does the same to a ``whileai._backend`` imported later.
"""

from __future__ import annotations

import importlib.machinery
import sys
from collections.abc import Callable, Sequence
from types import ModuleType
from typing import Any

# What WHILEAI_PURE=1 changes besides the kernels themselves.
BACKEND_NAMES = frozenset({"BACKEND", "KERNEL_BACKENDS", "NATIVE_ERROR", "kernel_names"})
MODULE = "whileai._backend"


def watch(module: ModuleType, on_read: Callable[[str], None]) -> None:
    """Call ``on_read(name)`` on every read of a kernel or backend name of ``module``."""
    names = BACKEND_NAMES | {n for group in module.KERNELS.values() for n in group}

    class Watched(ModuleType):
        def __getattribute__(self, name: str) -> Any:
            # `import whileai` copies BACKEND once for the package; that read decides nothing.
            if name in names and (name != "BACKEND"
                                  or sys._getframe(1).f_globals.get("__name__") != "whileai"):
                on_read(name)
            return super().__getattribute__(name)

    module.__class__ = Watched


class _Finder:
    """A meta-path finder that watches ``whileai._backend`` once it has run."""

    def __init__(self, on_read: Callable[[str], None]) -> None:
        self.on_read = on_read

    def find_spec(self, name: str, path: Sequence[str] | None = None,
                  target: ModuleType | None = None) -> Any:
        if name != MODULE:
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is None or spec.loader is None:
            return spec
        run = spec.loader.exec_module

        def exec_module(module: ModuleType) -> None:
            run(module)
            watch(module, self.on_read)

        spec.loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec


def install(on_read: Callable[[str], None]) -> None:
    """Watch ``whileai._backend`` now if it is loaded, and whenever it is (re)imported."""
    sys.meta_path.insert(0, _Finder(on_read))
    if MODULE in sys.modules:
        watch(sys.modules[MODULE], on_read)
