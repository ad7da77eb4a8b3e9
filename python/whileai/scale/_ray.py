"""The one door to Ray: a lazy import naming the extra, ordered execution.

Nothing outside :mod:`whileai.scale` imports Ray (``tests/test_house_layers.py`` checks it), and
this module imports it only when an adapter is called, so ``import whileai.scale`` works without
the extra.

>>> is_dataset([{"prompt": "a"}])
False
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Iterator
from typing import Any

__all__ = ["is_dataset", "ordered", "require_ray"]

INSTALL = "pip install 'whileai[ray]'"


def require_ray() -> Any:
    """Return the ``ray`` module, or raise ImportError naming the extra.

    Raises:
        ImportError: Ray (with Ray Data) is not installed.
    """
    try:
        import ray
        import ray.data
    except ImportError as exc:  # pragma: no cover - the test environment has the extra
        raise ImportError(f"whileai.scale needs Ray with Ray Data: {INSTALL}") from exc
    with warnings.catch_warnings():  # Ray 2.46 warns about its own field while making it
        warnings.simplefilter("ignore", DeprecationWarning)
        ray.data.DataContext.get_current()
    return ray


def is_dataset(value: Any) -> bool:
    """Whether ``value`` is a Ray Dataset (without importing Ray when it is not loaded)."""
    import sys

    data = sys.modules.get("ray.data")
    return data is not None and isinstance(value, data.Dataset)


@contextlib.contextmanager
def ordered(dataset: Any, progress: bool = True) -> Iterator[Any]:
    """Within the block, ``dataset`` executes in dataset order (``preserve_order``) and shows
    Ray Data's progress bars only if ``progress`` (and they were on); then both as they were.

    The merged reports number rows in dataset order, which needs the per-batch results in that
    order. A Dataset derived by ``map_batches`` shares its parent's context object (Ray copies
    the plan, not the context), so switching it for good would switch the caller's dataset too:
    the settings are put back when the block ends, for a call that executes inside it
    (``materialize``, a finished iteration).
    """
    context = dataset.context
    options = context.execution_options
    before, bars = options.preserve_order, context.enable_progress_bars
    options.preserve_order = True
    context.enable_progress_bars = progress and bars
    try:
        yield dataset
    finally:
        options.preserve_order, context.enable_progress_bars = before, bars

