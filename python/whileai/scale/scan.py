"""``hack_scan`` over a Ray Dataset: features made on the cluster, one scan on the driver.

The rows are read, parsed and turned into feature columns where they live, in two passes
(:mod:`whileai.scale.hack_scan`: the auto vocabulary from frequencies added across batches, then
the sparse cells); the driver holds the feature matrix, not the rows, and runs the one scan
kernel, so the report is the single-process report. See docs/scale.md ("hack_scan").
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from whileai.scale.hack_scan import scan_dataset
from whileai.simulations.clean.hack_scan import HackScanReport

__all__ = ["hack_scan_dataset"]


def hack_scan_dataset(
    rows: Any,
    endorsed: Sequence[str] | None = None,
    features: Mapping[str, Callable[[Mapping[str, Any]], Any]] | None = None,
    *,
    column: str | None = None,
    batch_size: int = 4096,
    **knobs: Any,
) -> HackScanReport:
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
        ConfigError: ``rows`` is not a Ray Dataset, or ``column`` names none of its columns.
        RowError: a row's text in ``column`` is not JSON, nests too deep or is not an object
            (as ``hack_scan`` of the JSONL file refuses that line), named ``rows[k] (dataset
            order)``; a reward that is NaN, a string or out of range is skipped as ``invalid``,
            as one process skips it.
        TypeError: an unknown keyword, or a caller's feature returned a non-number.
        ImportError: Ray is not installed (``pip install 'whileai[ray]'``).

    >>> hack_scan_dataset.__name__  # a Ray cluster example is in docs/scale.md
    'hack_scan_dataset'
    """
    return scan_dataset(rows, endorsed, features, column=column, batch_size=batch_size, **knobs)
