"""What the kernel tests share: calling both backends, comparing their answers, golden cases.

The ``backend`` and ``both_backends`` fixtures (``conftest.py``) hand out the native and the
pure module; these helpers call a kernel on both and compare, the way RapidFuzz's
``tests/distance/common.py`` does for its metrics. Nothing here reads ``whileai._backend``, so
a module importing it stays backend-free (``kernel_reach.py``).
"""

from __future__ import annotations

import json
import struct
from array import array
from collections.abc import Callable, Collection, Iterable, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

GOLDEN_DIR = Path(__file__).parent / "golden"


def backend_settings(max_examples: int) -> settings:
    """Hypothesis settings for a test that takes ``backend`` or ``both_backends``.

    The fixtures only hand out modules, so one value may serve every example; no deadline,
    since the machine is shared and a slow example is not a failure.
    """
    return settings(deadline=None, max_examples=max_examples,
                    suppress_health_check=[HealthCheck.function_scoped_fixture])


def outcome(call: Callable[[], Any], keep: Callable[[Any], Any] | None = None) -> tuple[str, Any]:
    """``("ok", result)``, or the exception's class name and message, so both can be compared.

    ``keep`` turns a result into what is compared (bytes for float arrays: -0.0 and 0.0 then
    differ); it runs outside the ``try``, so a result of the wrong kind fails the test.
    """
    try:
        result = call()
    except Exception as exc:
        return type(exc).__name__, str(exc)
    return "ok", result if keep is None else keep(result)


def same(both: tuple[ModuleType, ModuleType], name: str, *args: Any,
         keep: Callable[[Any], Any] | None = None, **kwargs: Any) -> tuple[str, Any]:
    """Assert that kernel ``name`` gives the same outcome on the native and the pure backend
    for these arguments; return that outcome."""
    native, pure = both
    got = outcome(lambda: getattr(native, name)(*args, **kwargs), keep)
    want = outcome(lambda: getattr(pure, name)(*args, **kwargs), keep)
    assert got == want
    return got


def as_bytes(arrays: Iterable[Any]) -> tuple[bytes, ...]:
    """The bytes of each array a kernel returned (bit for bit, NaN payloads and signed zeros)."""
    return tuple(a.tobytes() for a in arrays)


def scan_bytes(result: Any) -> tuple[bytes, ...]:
    """A scan's ``(rho, floor, support)`` as bytes; a result of another shape fails the test."""
    rho, floor, support = result
    return as_bytes((rho, floor, support))


def bits(values: Iterable[float]) -> list[int]:
    """The IEEE-754 bit pattern of each float, as the golden files store them
    (``tools/gen_golden_kernels.py``)."""
    return [struct.unpack("<Q", struct.pack("<d", v))[0] for v in values]


def golden(name: str) -> Any:
    """The parsed ``tests/golden/<name>.json``."""
    return json.loads((GOLDEN_DIR / f"{name}.json").read_text(encoding="utf-8"))


def golden_params(cases: list[dict[str, Any]],
                  label: Callable[[dict[str, Any]], str] | None = None) -> list[Any]:
    """Golden cases as ``pytest.param``s with the id ``case<index in the file>`` (and
    ``-<label>`` when given), so that a failing case names itself."""
    return [
        pytest.param(case, id=f"case{i}" + (f"-{label(case)}" if label else ""))
        for i, case in enumerate(cases)
    ]


# The scans' inputs (test_kernels_scan*.py): cell values and rewards with ties, signed zeros,
# NaN cells and wide ranges.
scan_cell_values = st.one_of(
    st.sampled_from([0.0, -0.0, 1.0, 0.5, -2.0, 3.0]),
    st.floats(allow_nan=True, allow_infinity=False, width=64),
)
scan_rewards = st.one_of(st.sampled_from([0.0, 1.0, 0.5, -2.25]), st.floats(-1e6, 1e6))


def spoil(problem: Sequence[Any], which: int, junk: Any,
          floats: Collection[int]) -> list[Any] | None:
    """``problem``'s arguments with the one at ``which`` made bad: an array gets ``junk`` in its
    middle (as an int, unless ``which`` is one of the float arrays ``floats``), any other
    argument becomes ``junk``; None for an empty array, which has no middle to spoil."""
    args = list(problem)
    if isinstance(args[which], array):
        if not args[which]:
            return None
        args[which] = list(args[which])
        args[which][len(args[which]) // 2] = junk if which in floats else int(junk)
    else:
        args[which] = junk
    return args
