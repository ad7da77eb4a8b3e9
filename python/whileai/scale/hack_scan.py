"""``hack_scan`` over a Ray Dataset in two passes on the cluster; the driver gets no row text.

What the scan needs from the whole pool, and where each piece is made:

1. **Pass 1** (``map_batches``): each batch's usable rows (reward and task read as
   :func:`~whileai.simulations.clean.hack_scan.usable_rows` reads them), each row's reward, a
   16-byte digest of its task key and of its trajectory, the skipped counts, and how many rows
   hold each auto-tier term (document frequencies add across batches). The driver numbers the
   asks by first appearance, adds the frequencies and picks the auto vocabulary exactly as one
   process would: the ``top`` terms by frequency, ties by code point, terms every usable row
   holds dropped.
2. **Pass 2** (only when an ask has mixed rewards, as in one process): each batch's feature
   columns, the hand tier by ``feature_columns`` and the auto tier restricted to the chosen
   vocabulary, as sparse cells with batch-local row numbers.

The driver shifts each batch's cells by the usable rows before it (batches come back in dataset
order) and hands the columns to :func:`~whileai.simulations.clean.hack_scan.scan_report`, which
merges identical columns, searches conjunctions and runs the one scan kernel: the report is the
single-process report by construction. The driver holds the sparse feature matrix (non-zero
cells) plus 32 bytes a row, never rows. The kernel's sums are now decomposable by blocks of asks
(``within_group_scan_partials`` and ``clean/scan_blocks.py``, docs/kernels.md "Scan"), so the
scan itself could run where the rows live; that is not wired here yet.
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
from whileai.errors import ConfigError
from whileai.scale._ray import is_dataset, ordered, require_ray
from whileai.scale.rows import batch_rows, raise_problem
from whileai.simulations.clean.hack_columns import Column, feature_columns
from whileai.simulations.clean.hack_features import agent_text, trajectory_key
from whileai.simulations.clean.hack_scan import hack_scan, scan_report, usable_rows
from whileai.simulations.progress import Progress

__all__ = ["scan_dataset"]

_DIGEST = 16
_SKIPS = ("unjudged", "invalid", "no_task")


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
    texts = [agent_text(row).lower() for row in used]
    texts.append("")
    _, vocab, ptr, members = _backend.hack_text_features(
        texts, array("q", [0]) * len(texts), sys.maxsize
    )
    return vocab, array("q", ptr), array("q", members)


def _tally(table: Any, column: str | None, reward: str, auto: bool) -> Any:
    """Pass 1 on one batch: rewards, task and trajectory digests, skips, term frequencies, and
    the batch's size and first bad row (:mod:`whileai.scale.rows`), raised by the driver."""
    import pyarrow as pa

    rows, _, problems = batch_rows(table, column)
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
        "terms": pa.array([terms], pa.list_(pa.binary())),
        "df": pa.array([df], pa.list_(pa.int64())),
        "n_rows": pa.array([table.num_rows], pa.int64()),
        "problems": pa.array([json.dumps(problems) if problems else None], pa.string()),
    }
    out.update({name: pa.array([skipped[name]], pa.int64()) for name in _SKIPS})
    return pa.table(out)


def _cells(
    table: Any,
    column: str | None,
    reward: str,
    vocab: frozenset[str],
    features: Mapping[str, Callable[[Mapping[str, Any]], Any]] | None,
    kinds: Mapping[str, str] | None,
) -> Any:
    """Pass 2 on one batch: its feature columns as cells numbered within the batch.

    A caller's feature that returns a non-number comes back as the ``error`` column (Ray would
    wrap the TypeError and print the batch's rows with it); the driver raises it.
    """
    import pyarrow as pa

    used = usable_rows(batch_rows(table, column)[0], reward)[0]  # pass 1 raised any bad row
    error: str | None = None
    try:
        columns: dict[str, Column] = feature_columns(used, features, kinds, auto=False)
    except TypeError as exc:
        columns, error = {}, str(exc)
    if vocab and used and error is None:
        terms, ptr, members = _terms(used)
        for j, term in enumerate(terms):
            if term in vocab:
                rows = members[ptr[j] : ptr[j + 1]]
                columns[f"contains:{term}"] = (rows, array("d", [1.0]) * len(rows))
    names = sorted(columns)
    ptr_out, rows_out, values_out = [0], array("q"), array("d")
    for name in names:
        rows, values = columns[name]
        rows_out.extend(rows)
        values_out.extend(values)
        ptr_out.append(len(rows_out))
    return pa.table({
        "n": pa.array([len(used)], pa.int64()),
        "error": pa.array([error], pa.string()),
        "names": pa.array([[_utf8(n) for n in names]], pa.list_(pa.binary())),
        "ptr": pa.array([ptr_out], pa.list_(pa.int64())),
        "rows": _one_list(pa, pa.int64(), rows_out),
        "values": _one_list(pa, pa.float64(), values_out),
    })


def _one_list(pa: Any, kind: Any, items: array[Any]) -> Any:
    """A one-row Arrow list column holding ``items``, read from their buffer (no Python numbers)."""
    flat = pa.Array.from_buffers(kind, len(items), [None, pa.py_buffer(items)])
    return pa.ListArray.from_arrays(pa.array([0, len(items)], pa.int32()), flat)


def _batches(dataset: Any, raw: Sequence[str] = ()) -> Any:
    """The one-row results of a pass, in dataset order, as Python dicts.

    The list columns named in ``raw`` come as numpy arrays read in place (no Python number per
    cell on the driver).
    """
    for block in dataset.iter_batches(batch_format="pyarrow", batch_size=None):
        plain = block.drop_columns(list(raw)).to_pylist()
        for i, row in enumerate(plain):
            for name in raw:
                row[name] = block.column(name)[i].values.to_numpy()
            yield row


def _vocabulary(df: Mapping[str, int], n_rows: int, top: int) -> frozenset[str]:
    """The auto tier's terms as one process picks them: ``ranked[:top]`` (docs of the kernel)."""
    ranked = ((-c, t) for t, c in df.items() if c < n_rows)
    kept = heapq.nsmallest(top, ranked) if top >= 0 else sorted(ranked)[:top]
    return frozenset(t for _, t in kept)


def scan_dataset(
    rows: Any,
    endorsed: Sequence[str] | None = None,
    features: Mapping[str, Callable[[Mapping[str, Any]], Any]] | None = None,
    *,
    column: str | None = None,
    batch_size: int = 4096,
    **knobs: Any,
) -> dict[str, Any]:
    """Return ``hack_scan``'s report for a Ray Dataset, the features made on the cluster.

    Args:
        rows: a ``ray.data.Dataset`` of graded rows (columns, or JSON text in ``column``).
        endorsed / features: as :func:`whileai.simulations.hack_scan` (``features`` are
            pickled to the workers and run there).
        column: the column holding each row as JSON text (``ray.data.read_text`` gives
            ``"text"``).
        batch_size: rows per ``map_batches`` batch.
        **knobs: the other keywords of ``hack_scan``.

    Returns:
        The report, equal to ``hack_scan`` over the same rows in dataset order.

    Raises:
        ConfigError: ``rows`` is not a Ray Dataset, or ``column`` names none of its columns.
        RowError: a row's text in ``column`` is not a JSON object (as the JSONL reader refuses
            a line), named by its place in the dataset.
        TypeError: an unknown keyword, or a caller's feature returned a non-number.
        ValueError: ``alpha`` is outside (0, 1).
        ImportError: Ray is not installed (``pip install 'whileai[ray]'``).

    >>> scan_dataset.__name__  # a Ray cluster example is in docs/scale.md
    'scan_dataset'
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

    def run(fn: Callable[..., Any], raw: Sequence[str] = (), **fn_kwargs: Any) -> Any:
        mapped = rows.map_batches(fn, batch_format="pyarrow", batch_size=batch_size,
                                  fn_kwargs={"column": column, "reward": reward, **fn_kwargs})
        with ordered(mapped, progress):
            yield from _batches(mapped, raw)

    group_of: dict[bytes, int] = {}
    groups, rewards, traj = array("q"), array("d"), bytearray()
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
            traj += part["traj"]
            for name in _SKIPS:
                skipped[name] += part[name]
            df.update(dict(zip(map(_text, part["terms"]), part["df"], strict=True)))
            line.update(len(groups))
    vocab = _vocabulary(df, len(groups), kw["top"]) if auto else frozenset()
    del df, group_of

    def columns(line: Progress) -> dict[str, Column]:
        line.stage("features on the cluster", len(groups))
        out: dict[str, tuple[array[int], array[float]]] = {}
        offset = 0
        parts = run(_cells, ("rows", "values"), vocab=vocab, features=features,
                    kinds=kw["kinds"])
        for part in parts:
            if part["error"] is not None:
                raise TypeError(part["error"])
            ptr, cells, values = part["ptr"], part["rows"] + offset, part["values"]
            for j, name in enumerate(map(_text, part["names"])):
                got = out.setdefault(name, (array("q"), array("d")))
                got[0].frombytes(cells[ptr[j] : ptr[j + 1]].tobytes())
                got[1].frombytes(values[ptr[j] : ptr[j + 1]].tobytes())
            offset += part["n"]
            line.update(offset)
        return out

    return scan_report(
        columns, groups, rewards, skipped,
        lambda i: bytes(traj[i * _DIGEST : (i + 1) * _DIGEST]),
        endorsed=kw["endorsed"], n_perm=kw["n_perm"], min_obs=kw["min_obs"], alpha=kw["alpha"],
        seed=kw["seed"], progress=progress,
    )
