"""Dataset ids where rows are expected: ``"ds_..."`` is pulled through the client.

``decontaminate(against=["ds_..."])`` and ``simulate(tasks="ds_...")`` call ``resolve_ids``;
an id that cannot be pulled raises instead of being read as literal text.

>>> is_dataset_id("ds_1a2b"), is_dataset_id("ds_ plain text"), is_dataset_id("rows.jsonl")
(True, False, False)
"""

from __future__ import annotations

from typing import Any

from whileai.platform.refs import is_dataset_id

__all__ = ["is_dataset_id", "resolve_ids"]


def resolve_ids(source: Any) -> Any:
    """Replace dataset ids by their rows: one id, or ids inside a list or tuple.

    Anything else comes back unchanged.

    Raises:
        NotFoundError, NoKeyError, UnreachableError: the id cannot be pulled.
    """
    if is_dataset_id(source):
        from whileai.platform.datasets import pull

        return pull(source, progress=False)
    if isinstance(source, (list, tuple)) and any(is_dataset_id(s) for s in source):
        return [resolve_ids(item) if is_dataset_id(item) else item for item in source]
    return source
