"""``hack_scan`` over a Ray Dataset: the rows stream to one scan, which gives the same report.

Why the scan itself is not split: the kernel's correlations and its permutation floor are float
sums in one documented order (asks ascending, rows ascending within an ask) over *all* asks, and
the floor of each shuffle is a maximum over every feature of the whole pool; per-ask partial sums
added afterwards round differently, so a split scan would not return the single-process report
``==``. What is split is what is exact: the dataset is read, decoded and parsed where it lives
(``map_batches`` on the cluster), and the rows reach the scan in dataset order, batch by batch,
without the cluster ever holding them twice. See docs/scale.md ("hack_scan") for the costs.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from whileai.errors import ConfigError
from whileai.scale._ray import in_order, is_dataset, require_ray, rows_of_table
from whileai.simulations.clean.hack_scan import hack_scan

__all__ = ["hack_scan_dataset"]

_ROW = "__whileai_row"


def _encode(table: Any, column: str | None) -> Any:
    """Turn each row of a batch into one JSON text (parsed JSON lines, or the given columns)."""
    import pyarrow as pa

    texts = [json.dumps(row) for row in rows_of_table(table, column)]
    return pa.table({_ROW: pa.array(texts, pa.string())})


def hack_scan_dataset(
    rows: Any,
    endorsed: Sequence[str] | None = None,
    features: Mapping[str, Callable[[Mapping[str, Any]], Any]] | None = None,
    *,
    column: str | None = None,
    batch_size: int = 4096,
    **knobs: Any,
) -> dict[str, Any]:
    """Return :func:`whileai.simulations.hack_scan`'s report for the rows of a Ray Dataset.

    Args:
        rows: a ``ray.data.Dataset`` of graded rows (columns, or JSON text in ``column``).
        endorsed: substrings of the feature names the reward should track.
        features: your own ``{"name": fn(row) -> number}`` features.
        column: the column holding each row as JSON text (``ray.data.read_text`` gives
            ``"text"``: use it for rows with nested steps, which Arrow would pad).
        batch_size: rows per batch read from the cluster.
        **knobs: the other keywords of ``hack_scan`` (``reward``, ``n_perm``, ``min_obs``,
            ``alpha``, ``seed``, ``auto``, ``top``, ``kinds``, ``progress``).

    Returns:
        The report, equal to ``hack_scan`` over the same rows in dataset order.

    Raises:
        ConfigError: ``rows`` is not a Ray Dataset.
        TypeError: an unknown keyword.
        ImportError: Ray is not installed (``pip install 'whileai[ray]'``).

    >>> hack_scan_dataset.__name__  # a Ray cluster example is in docs/scale.md
    'hack_scan_dataset'
    """
    require_ray()
    if not is_dataset(rows):
        raise ConfigError(f"rows must be a ray.data.Dataset, got {type(rows).__name__}")
    # hack_scan's own signature says which keywords it takes: refused here, before any Ray work
    inspect.signature(hack_scan).bind_partial(None, endorsed, features, **knobs)
    collected: list[dict[str, Any]] = []
    encoded = in_order(rows.map_batches(_encode, batch_format="pyarrow", batch_size=batch_size,
                                        fn_kwargs={"column": column}))
    for batch in encoded.iter_batches(batch_format="pyarrow", batch_size=batch_size):
        collected.extend(json.loads(t) for t in batch.column(_ROW).to_pylist())
    return hack_scan(collected, endorsed, features, **knobs)

