"""``hack_scan`` over a Ray Dataset, the scan summed where the rows live; the driver gets no
row text and no feature matrix.

What the scan needs from the whole pool, and where each piece is made (each row carries its
place in the dataset, zipped on with ``Dataset.zip``, so nothing depends on batch order):

1. **Pass 1** (``map_batches``): each batch's usable rows (reward and task read as
   :func:`~whileai.simulations.clean.hack_scan.usable_rows` reads them), each row's reward and
   place, a 16-byte digest of its task key and of its trajectory, the skipped counts, and how
   many rows hold each auto-tier term (document frequencies add across batches). The driver
   numbers the asks by first appearance, adds the frequencies and picks the auto vocabulary
   exactly as one process would: the ``top`` terms by frequency, ties by code point, terms
   every usable row holds dropped.
2. **Pass 2** (only when an ask has mixed rewards, as in one process): each usable row's feature
   cells (the hand tier by ``feature_columns``, the auto tier restricted to the chosen
   vocabulary) with its index among the usable rows, its ask id and its block of asks
   (``ask // BLOCK``), materialized on the cluster.
3. **The scan** (:mod:`whileai.scale.hack_scan_blocks`), grouped by block: column fingerprints
   (identical columns merged on the driver), the kernel's block partials added in block order,
   the conjunction floor's AND columns, the strong columns' rows for the conjunction search.

The report is ``hack_scan``'s to the byte (the kernel's sums are defined block by block,
docs/kernels.md "Scan"). The driver holds 40 bytes a usable row (ask id, reward, place,
trajectory digest), the term counts of pass 1 and the block partials that arrive ahead of a
block still to come (each is added once the blocks before it have been).
"""

from __future__ import annotations

import hashlib
import heapq
import inspect
import json
import sys
from array import array
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from whileai import _backend
from whileai._pure.scan import BLOCK
from whileai.errors import ConfigError
from whileai.rows.progress import Progress
from whileai.scale._ray import is_dataset, ordered, require_ray
from whileai.scale.hack_scan_blocks import BlockScan
from whileai.scale.rows import batch_rows, raise_problem
from whileai.simulations.clean.hack_columns import Column, feature_columns
from whileai.simulations.clean.hack_features import agent_text, trajectory_key
from whileai.simulations.clean.hack_scan import hack_scan, scan_report, usable_rows
from whileai.simulations.clean.hack_verdict import HackScanReport

__all__ = ["hack_scan_dataset"]

_DIGEST = 16
_SKIPS = ("unjudged", "invalid", "no_task")
_ROW = "__whileai_row"  # each row's place in the dataset, zipped on for the passes


def _split_ids(table: Any) -> tuple[Any, list[int]]:
    """The batch without its place column, and each row's place in the dataset."""
    return table.drop_columns([_ROW]), table.column(_ROW).to_pylist()


def _used_places(rows: list[Any], at: list[int], used: list[Any], ids: list[int]) -> list[int]:
    """The dataset places of the used rows (``usable_rows`` keeps row objects, in order)."""
    where = {id(row): k for k, row in enumerate(rows)}
    return [ids[at[where[id(row)]]] for row in used]


def _utf8(text: str) -> bytes:
    """Text as bytes for Arrow, lone surrogates (valid in a Python str) kept."""
    return text.encode("utf-8", "surrogatepass")


def _text(data: bytes) -> str:
    return data.decode("utf-8", "surrogatepass")


def _digest(text: str) -> bytes:
    return hashlib.blake2b(_utf8(text), digest_size=_DIGEST).digest()


def _terms(used: Sequence[Mapping[str, Any]]) -> tuple[list[str], array[int], array[int]]:
    """Every auto-tier term of the rows, and the rows holding each, by the scan's own kernel.

    The kernel drops a term every row holds; an empty text appended keeps them all (a term in
    every row of a batch need not be in every row of the pool).
    """
    texts = [agent_text(row) for row in used]
    texts.append("")
    _, vocab, ptr, members = _backend.hack_text_features(
        texts, array("q", [0]) * len(texts), sys.maxsize, lower=True
    )
    return vocab, array("q", ptr), array("q", members)


def _tally(table: Any, column: str | None, reward: str, auto: bool) -> Any:
    """Pass 1 on one batch: rewards, task and trajectory digests, skips, term frequencies, and
    the batch's size and first bad row (:mod:`whileai.scale.rows`), raised by the driver."""
    import pyarrow as pa

    table, ids = _split_ids(table)
    rows, at, problems = batch_rows(table, column)
    used, _, rewards, keys, skipped = usable_rows(rows, reward)
    terms: list[bytes] = []
    df: list[int] = []
    if auto and used:
        vocab, ptr, _ = _terms(used)
        terms = [_utf8(t) for t in vocab]
        df = [ptr[j + 1] - ptr[j] for j in range(len(vocab))]
    out = {
        "keys": pa.array([b"".join(_digest(k) for k in keys)], pa.binary()),
        "traj": pa.array([b"".join(_digest(trajectory_key(r)) for r in used)], pa.binary()),
        "rewards": pa.array([rewards], pa.list_(pa.float64())),
        "places": pa.array([array("q", _used_places(rows, at, used, ids)).tobytes()],
                           pa.binary()),
        "terms": pa.array([terms], pa.list_(pa.binary())),
        "df": pa.array([df], pa.list_(pa.int64())),
        "n_rows": pa.array([table.num_rows], pa.int64()),
        "problems": pa.array([json.dumps(problems) if problems else None], pa.string()),
    }
    out.update({name: pa.array([skipped[name]], pa.int64()) for name in _SKIPS})
    return pa.table(out)


def _batch_columns(
    used: list[Any],
    vocab: frozenset[str],
    features: Mapping[str, Callable[[Mapping[str, Any]], Any]] | None,
    kinds: Mapping[str, str] | None,
) -> tuple[dict[str, Column], str | None]:
    """The used rows' feature columns (rows numbered within the batch), or the error of a
    caller's feature that returned a non-number (Ray would wrap the TypeError and print the
    batch's rows with it; the driver raises it)."""
    try:
        columns: dict[str, Column] = feature_columns(used, features, kinds, auto=False)
    except TypeError as exc:
        return {}, str(exc)
    if vocab and used:
        terms, ptr, members = _terms(used)
        for j, term in enumerate(terms):
            if term in vocab:
                rows = members[ptr[j] : ptr[j + 1]]
                columns[f"contains:{term}"] = (rows, array("d", [1.0]) * len(rows))
    return columns, None


def _row_cells(
    table: Any,
    column: str | None,
    reward: str,
    vocab: frozenset[str],
    features: Mapping[str, Callable[[Mapping[str, Any]], Any]] | None,
    kinds: Mapping[str, str] | None,
    places: array[int],
    groups: array[int],
) -> Any:
    """Pass 2 on one batch: each usable row's block, global index (among usable rows), ask id,
    reward and feature cells; a caller's bad feature as one row of block -1 holding the error.
    """
    import bisect

    import pyarrow as pa

    table, ids = _split_ids(table)
    rows, at, _ = batch_rows(table, column)  # pass 1 raised any bad row
    used, _, rewards, _, _ = usable_rows(rows, reward)
    columns, error = _batch_columns(used, vocab, features, kinds)
    index = [bisect.bisect_left(places, p) for p in _used_places(rows, at, used, ids)]
    asks = [groups[i] for i in index]
    names: list[list[bytes]] = [[] for _ in used]
    values: list[list[float]] = [[] for _ in used]
    for name, (col_rows, col_values) in sorted(columns.items()):
        raw = _utf8(name)
        for r, v in zip(col_rows, col_values, strict=True):
            names[r].append(raw)
            values[r].append(v)
    if error is not None:
        index, asks, rewards, names, values = [-1], [-1], [0.0], [[_utf8(error)]], [[]]
    return pa.table({
        "block": pa.array([a // BLOCK if a >= 0 else -1 for a in asks], pa.int64()),
        "index": pa.array(index, pa.int64()),
        "ask": pa.array(asks, pa.int64()),
        "reward": pa.array(rewards, pa.float64()),
        "names": pa.array(names, pa.list_(pa.binary())),
        "values": pa.array(values, pa.list_(pa.float64())),
    })


def _batches(dataset: Any) -> Any:
    """The one-row results of a pass, in dataset order, as Python dicts."""
    for block in dataset.iter_batches(batch_format="pyarrow", batch_size=None):
        yield from block.to_pylist()


def _vocabulary(df: Mapping[str, int], n_rows: int, top: int) -> frozenset[str]:
    """The auto tier's terms as one process picks them: ``ranked[:top]`` (docs of the kernel)."""
    ranked = ((-c, t) for t, c in df.items() if c < n_rows)
    kept = heapq.nsmallest(top, ranked) if top >= 0 else sorted(ranked)[:top]
    return frozenset(t for _, t in kept)


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
        features: your own ``{"name": fn(row) -> number}`` features (pickled to the workers
            and run there).
        column: the column holding each row as JSON text (``ray.data.read_text`` gives
            ``"text"``: use it for rows with nested steps, which Arrow would pad).
        batch_size: rows per ``map_batches`` batch.
        **knobs: the other keywords of ``hack_scan`` (``reward``, ``n_perm``, ``min_obs``,
            ``alpha``, ``seed``, ``auto``, ``top``, ``kinds``, ``progress``).

    Returns:
        The report, equal to ``hack_scan`` over the same rows in dataset order.

    Raises:
        ConfigError: ``rows`` is not a Ray Dataset, ``column`` names none of its columns, or
            ``alpha`` is outside (0, 1).
        RowError: a row's text in ``column`` is not JSON, nests too deep or is not an object
            (as ``hack_scan`` of the JSONL file refuses that line), named ``rows[k] (dataset
            order)``; a reward that is NaN, a string or out of range is skipped as ``invalid``,
            as one process skips it.
        TypeError: an unknown keyword, or a caller's feature returned a non-number.
        ImportError: Ray is not installed (``pip install 'whileai[ray]'``).

    >>> hack_scan_dataset.__name__  # a Ray cluster example is in docs/scale.md
    'hack_scan_dataset'
    """
    require_ray()
    if not is_dataset(rows):
        raise ConfigError(f"rows must be a ray.data.Dataset, got {type(rows).__name__}")
    # hack_scan's own signature says which keywords it takes: refused here, before any Ray work
    bound = inspect.signature(hack_scan).bind_partial(None, endorsed, features, **knobs)
    bound.apply_defaults()
    kw = bound.arguments
    reward, progress = kw["reward"], kw["progress"]
    auto = bool(kw["auto"]) and kw["top"] != 0
    scan_report(lambda line: {}, [], [], {}, str, alpha=kw["alpha"], progress=False)

    ray = require_ray()
    # Each row's place in the dataset, zipped on (Dataset.zip pairs rows by position).
    placed = rows.zip(ray.data.range(rows.count()).rename_columns({"id": _ROW}))

    def mapped(fn: Callable[..., Any], **fn_kwargs: Any) -> Any:
        return placed.map_batches(fn, batch_format="pyarrow", batch_size=batch_size,
                                  fn_kwargs={"column": column, "reward": reward, **fn_kwargs})

    def run(fn: Callable[..., Any], **fn_kwargs: Any) -> Any:
        out = mapped(fn, **fn_kwargs)
        with ordered(out, progress):
            yield from _batches(out)

    group_of: dict[bytes, int] = {}
    groups, rewards, traj, places = array("q"), array("d"), bytearray(), array("q")
    skipped = dict.fromkeys(_SKIPS, 0)
    df: Counter[str] = Counter()
    seen = 0  # dataset rows before the batch: a bad row is named by its place in the dataset
    with Progress("hack_scan (ray)", None, enabled=progress) as line:
        line.stage("pass 1: asks and terms on the cluster", unit="rows")
        for part in run(_tally, auto=auto):
            if part["problems"] is not None:
                raise_problem(json.loads(part["problems"]), seen)
            seen += part["n_rows"]
            keys = part["keys"]
            for at in range(0, len(keys), _DIGEST):
                groups.append(group_of.setdefault(keys[at : at + _DIGEST], len(group_of)))
            rewards.extend(part["rewards"])
            places.frombytes(part["places"])
            traj += part["traj"]
            for name in _SKIPS:
                skipped[name] += part[name]
            df.update(dict(zip(map(_text, part["terms"]), part["df"], strict=True)))
            line.update(len(groups))
    vocab = _vocabulary(df, len(groups), kw["top"]) if auto else frozenset()
    del df, group_of

    def grouped() -> Any:
        cells = mapped(_row_cells, vocab=vocab, features=features, kinds=kw["kinds"],
                       places=places, groups=groups)
        return cells.materialize()

    return scan_report(
        lambda line: {}, groups, rewards, skipped,
        lambda i: bytes(traj[i * _DIGEST : (i + 1) * _DIGEST]),
        endorsed=kw["endorsed"], n_perm=kw["n_perm"], min_obs=kw["min_obs"], alpha=kw["alpha"],
        seed=kw["seed"], progress=progress, scan=BlockScan(grouped, groups, rewards),
    )
