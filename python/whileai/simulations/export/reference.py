"""``"module:attr"`` references: what an exported environment stores instead of objects, so a
trainer's process (a fresh interpreter, maybe on another machine) can import the reward, the world
and the executor by name.

>>> reference_of("whileai.simulations.export.checklist:task_checklist", "reward")
'whileai.simulations.export.checklist:task_checklist'
"""

from __future__ import annotations

import importlib
from typing import Any

from whileai.errors import SpecError

__all__ = ["reference_of", "resolve_reference"]


def reference_of(obj: Any, what: str) -> str:
    """A ``"module:attr"`` reference a trainer process can import, or ``SpecError``.

    A string is checked to import; a function or class must be reachable by its module and
    qualified name (a lambda, a nested function or anything defined in ``__main__`` is not).

    >>> reference_of("whileai.simulations.export.checklist:task_checklist", "reward")
    'whileai.simulations.export.checklist:task_checklist'
    """
    if isinstance(obj, str):
        resolve_reference(obj, what)
        return obj
    module = getattr(obj, "__module__", None)
    qualname = getattr(obj, "__qualname__", None)
    if not module or not qualname or "<lambda>" in qualname or "<locals>" in qualname \
            or module == "__main__":
        raise SpecError(
            f"{what}={obj!r} cannot be imported by name in the trainer's process: a lambda, "
            f"a nested function or anything defined in __main__ has no importable address. "
            f"Define it at module level in an importable module and pass it (or the string "
            f"'module:attr')."
        )
    ref = f"{module}:{qualname}"
    if resolve_reference(ref, what) is not obj:
        raise SpecError(f"{what}: {ref} does not resolve to the object given; pass 'module:attr'")
    return ref


def resolve_reference(ref: str, what: str = "reference") -> Any:
    """Import ``"module:attr"`` (or ``"module.attr"``) and return the object.

    >>> resolve_reference("whileai.simulations.world:world").__name__
    'world'
    """
    module_name, sep, attr = ref.partition(":")
    if not sep:
        module_name, _, attr = ref.rpartition(".")
    if not module_name or not attr:
        raise SpecError(f"{what}={ref!r}: expected 'module:attr'")
    try:
        obj: Any = importlib.import_module(module_name)
        for part in attr.split("."):
            obj = getattr(obj, part)
    except (ImportError, AttributeError) as exc:
        raise SpecError(f"{what}={ref!r} does not import ({exc}); install the module that "
                        "defines it or fix the reference") from exc
    return obj
