"""The one door to Ray: a lazy import naming the extra, ordered execution, rows of a batch.

Nothing outside :mod:`whileai.scale` imports Ray (``tests/test_house_layers.py`` checks it), and
this module imports it only when an adapter is called, so ``import whileai.scale`` works without
the extra.

>>> rows_of_table.__name__
'rows_of_table'
"""

from __future__ import annotations

import json
import warnings
from typing import Any

__all__ = ["in_order", "require_ray", "rows_of_table"]

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


def in_order(dataset: Any) -> Any:
    """Return ``dataset`` with ``preserve_order`` on, so its blocks come back in dataset order.

    The merged reports number rows in dataset order (their examples' ``index``), which needs the
    per-batch results in that order. A Ray Dataset runs with the context saved in its plan, so
    the switch is set there, on a dataset this package derived (the caller's stays as it was).
    """
    dataset.context.execution_options.preserve_order = True
    return dataset


def rows_of_table(table: Any, column: str | None) -> list[dict[str, Any]]:
    """The rows of an Arrow batch as dicts: each row's columns, or the JSON text in ``column``.

    Arrow pads a nested struct with the union of its keys (``None`` where a row had none), which
    would change rows that ``hack_scan`` reads key by key; reading the JSONL as text
    (``ray.data.read_text``) and passing ``column="text"`` keeps every row exactly as written.
    """
    if column is None:
        rows: list[dict[str, Any]] = table.to_pylist()
        return rows
    return [json.loads(text) for text in table.column(column).to_pylist()]
