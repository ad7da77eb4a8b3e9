"""``hack_scan``'s scan summed where the rows live: blocks of asks on the cluster, totals on the
driver (docs/kernels.md, "Scan": every sum across asks is added block by block).

The rows come as a Dataset of usable rows with their global row index, ask id and feature cells
(``names``/``values`` lists), grouped by block (``ask // BLOCK``). Per block, on the cluster:

1. each column's fingerprint (a digest of its global rows and values, and whether every value
   is 1.0): the driver merges identical columns exactly as ``matrix_from_columns`` does;
2. the block partials of the merged columns (``within_group_scan_partials``), added on the
   driver in block order into the single-process ``rho``, ``support`` and floor
   (``scan_from_partials``); the conjunction floor asks for the AND columns of each
   permutation's chosen pairs, a second pass;
3. the rows of the few strong binary columns the conjunction search pairs (what
   ``conjunctions`` reads, with the driver's groups and rewards).

The driver holds per block and column ``n_perm + 3`` floats while it adds them, and 16 bytes a
row (ask id and reward), never the matrix.
"""

from __future__ import annotations

import hashlib
from array import array
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from whileai import _backend
from whileai._pure.scan import BLOCK
from whileai.rows.progress import Progress
from whileai.simulations.clean.hack_matrix import CONJ_TOP, conjunctions
from whileai.simulations.clean.hack_verdict import Scanned, tier
from whileai.simulations.clean.scan_blocks import and_columns, scan_from_partials

__all__ = ["BlockScan", "column_key"]

_Matrix = tuple[Any, Any, Any, Any, Any, Any]


def column_key(parts: Sequence[tuple[int, bytes]]) -> bytes:
    """One column's digest from its per-block digests (any order; empty blocks left out)."""
    h = hashlib.blake2b(digest_size=16)
    for block, digest in sorted(parts):
        h.update(block.to_bytes(8, "little", signed=True))
        h.update(digest)
    return h.digest()


def block_digest(rows: array[int], values: array[float]) -> bytes:
    """A column's digest within one block: its global rows (int64) and values (float64)."""
    h = hashlib.blake2b(array("q", rows).tobytes(), digest_size=16)
    h.update(array("d", values).tobytes())
    return h.digest()


def _block_columns(table: Any) -> tuple[array[int], dict[str, tuple[array[int], array[float]]],
                                        array[int], array[float]]:
    """A block's rows sorted by global index: the indices, ``{name: (local rows, values)}``,
    the ask ids and the rewards."""
    index = table.column("index").to_pylist()
    order = sorted(range(table.num_rows), key=index.__getitem__)
    asks = table.column("ask").to_pylist()
    reward = table.column("reward").to_pylist()
    names = table.column("names").to_pylist()
    values = table.column("values").to_pylist()
    columns: dict[str, tuple[array[int], array[float]]] = {}
    for local, i in enumerate(order):
        for name, value in zip(names[i], values[i], strict=True):
            rows, vals = columns.setdefault(name.decode("utf-8", "surrogatepass"),
                                            (array("q"), array("d")))
            rows.append(local)
            vals.append(value)
    return (array("q", (index[i] for i in order)), columns, array("q", (asks[i] for i in order)),
            array("d", (reward[i] for i in order)))


def _matrix(table: Any, names: Sequence[str]) -> _Matrix:
    """The block's column-major matrix of ``names`` (in that order), ask ids and rewards."""
    _, columns, asks, reward = _block_columns(table)
    ptr, rows, vptr, values = array("q", [0]), array("q"), array("q", [0]), array("d")
    for name in names:
        got = columns.get(name)
        if got is not None:
            rows.extend(got[0])
            values.extend(got[1])
        ptr.append(len(rows))
        vptr.append(len(values))
    return ptr, rows, vptr, values, asks, reward


def _fingerprints(table: Any) -> dict[str, list[Any]]:
    """Per column of the block: its name, block digest, and whether every value is 1.0."""
    index, columns, asks, _ = _block_columns(table)
    block = asks[0] // BLOCK if len(asks) else 0
    out: dict[str, list[Any]] = {"name": [], "block": [], "digest": [], "binary": []}
    for name, (rows, values) in columns.items():
        out["name"].append(name.encode("utf-8", "surrogatepass"))
        out["block"].append(block)
        out["digest"].append(block_digest(array("q", (index[r] for r in rows)), values))
        out["binary"].append(values.count(1.0) == len(values))
    return out


def _partials_table(got: Sequence[Any]) -> dict[str, list[bytes]]:
    return {f"p{k}": [a.tobytes()] for k, a in enumerate(got)}


def _from_table(row: dict[str, Any]) -> tuple[Any, ...]:
    codes = "qdqddd"
    out = []
    for k, code in enumerate(codes):
        a = array(code)
        a.frombytes(row[f"p{k}"])
        out.append(a)
    return tuple(out)


class BlockScan:
    """The scan of a grouped Dataset of usable rows (see the module doc), as ``scan_report``'s
    ``scan``: ``BlockScan(grouped, groups, rewards)(line, is_endorsed, n_perm, seed, alpha)``.
    """

    def __init__(self, make_grouped: Callable[[], Any], groups: Sequence[int],
                 rewards: Sequence[float]) -> None:
        self.make_grouped = make_grouped
        self.grouped: Any = None
        self.groups = groups
        self.rewards = rewards

    def _each_block(self, fn: Callable[..., Any], **kwargs: Any) -> Iterator[dict[str, Any]]:
        mapped = self.grouped.groupby("block").map_groups(
            fn, batch_format="pyarrow", fn_kwargs=kwargs)
        yield from mapped.iter_rows()

    def __call__(self, line: Progress, is_endorsed: Callable[[str], bool], n_perm: int,
                 seed: int, alpha: float) -> Scanned:
        line.stage("features on the cluster")
        self.grouped = self.make_grouped()
        line.stage("column fingerprints on the cluster")
        parts: dict[str, list[tuple[int, bytes]]] = {}
        binary: dict[str, bool] = {}
        for row in self._each_block(_fingerprint_rows):
            if row["block"] < 0:
                raise TypeError(row["name"].decode("utf-8", "surrogatepass"))
            name = row["name"].decode("utf-8", "surrogatepass")
            parts.setdefault(name, []).append((row["block"], row["digest"]))
            binary[name] = binary.get(name, True) and row["binary"]
        # Identical columns merge: the representative is an endorsed name, else the longest,
        # then the first (matrix_from_columns's rule); columns in representative order.
        same: dict[tuple[bytes, bool], list[str]] = {}
        for name in sorted(parts):
            same.setdefault((column_key(parts[name]), binary[name]), []).append(name)
        merged = sorted(
            (sorted(names, key=lambda n: (not is_endorsed(n), -len(n), n))
             for names in same.values()),
            key=lambda names: names[0],
        )
        keys = {(column_key(parts[m[0]]), binary[m[0]]): j for j, m in enumerate(merged)}
        names = [m[0] for m in merged]
        is_binary = [binary[n] for n in names]
        candidates = [j for j, b in enumerate(is_binary) if b]
        line.stage(f"{n_perm} permutations on the cluster")
        # Added as they come (in block order they are added at once and not held).
        block_parts = (_from_table(r) for r in self._each_block(
            _partials_rows, names=names, n_perm=n_perm, seed=seed))

        def pair_partials(pairs: list[tuple[int, int]]) -> Iterator[Any]:
            return (_from_table(r) for r in self._each_block(
                _pair_rows, names=names, pairs=pairs, n_perm=n_perm, seed=seed))

        blocks = sorted({ask // BLOCK for ask in self.groups})
        rho, floor, sup = scan_from_partials(block_parts, len(names), n_perm, candidates,
                                             CONJ_TOP, pair_partials, expected=blocks)
        line.stage("conjunctions")
        rho_by = {n: rho[j] for j, n in enumerate(names)}
        strong_binary = {names[j] for j in candidates}
        live = [n for n in strong_binary if abs(rho_by.get(n, 0.0)) > 0.0]
        strong = sorted(live, key=lambda n: (-abs(rho_by[n]), n))[:CONJ_TOP]
        rows_of: dict[str, array[int]] = {n: array("q") for n in strong}
        for row in self._each_block(_rows_of, names=strong):
            got = array("q")
            got.frombytes(row["rows"])
            rows_of[row["name"].decode("utf-8", "surrogatepass")].extend(got)
        for n in strong:
            rows_of[n] = array("q", sorted(rows_of[n]))
        conj = conjunctions(rows_of.__getitem__, self.groups, self.rewards, rho_by,
                            strong_binary, top=CONJ_TOP, alpha=alpha)
        return self._with_conjunctions(merged, keys, rho, sup, floor, conj, is_endorsed)

    def _with_conjunctions(
        self, merged: list[list[str]], keys: dict[tuple[bytes, bool], int], rho: Any, sup: Any,
        floor: Any, conj: dict[str, list[int]], is_endorsed: Callable[[str], bool],
    ) -> Scanned:
        """``add_columns`` of the conjunction columns: one equal to a column joins it as a name;
        the others are appended (in name order), scanned on the driver from their rows."""
        groups_of = [list(m) for m in merged]
        rho, sup = list(rho), list(sup)
        new: list[list[int]] = []
        for name in sorted(conj):
            rows = conj[name]
            by_block: dict[int, array[int]] = {}
            for r in rows:
                by_block.setdefault(self.groups[r] // BLOCK, array("q")).append(r)
            key = (column_key([(b, block_digest(rs, array("d", [1.0]) * len(rs)))
                               for b, rs in by_block.items()]), True)
            j = keys.get(key)
            if j is None:
                j = keys[key] = len(groups_of)
                groups_of.append([])
                new.append(rows)
            groups_of[j].append(name)
        if new:
            ptr, flat = array("q", [0]), array("q")
            for rows in new:
                flat.extend(rows)
                ptr.append(len(flat))
            got, _, got_sup = _backend.within_group_scan_columns(
                ptr, flat, array("q", [0]) * len(ptr), array("d"), array("q", self.groups),
                array("d", self.rewards))
            rho.extend(got)
            sup.extend(got_sup)
        tiers = dict.fromkeys(conj, "conjunction")
        for names in groups_of:
            names.sort(key=lambda n: (not is_endorsed(n), -len(n), n))
        return Scanned(
            names=tuple(n[0] for n in groups_of),
            tiers=tuple(tiers.get(n[0]) or tier(n[0]) for n in groups_of),
            aliases=tuple(tuple(n[1:]) for n in groups_of),
            rho=rho, support=sup, floor=floor,
        )


def _fingerprint_rows(table: Any) -> Any:
    import pyarrow as pa

    if table.column("block")[0].as_py() < 0:  # a caller's feature failed: its error
        error = table.column("names")[0].as_py()[0]
        return pa.table({"name": pa.array([error], pa.binary()), "block": pa.array([-1]),
                         "digest": pa.array([b""], pa.binary()), "binary": pa.array([False])})
    out = _fingerprints(table)
    return pa.table({
        "name": pa.array(out["name"], pa.binary()),
        "block": pa.array(out["block"], pa.int64()),
        "digest": pa.array(out["digest"], pa.binary()),
        "binary": pa.array(out["binary"], pa.bool_()),
    })


def _partials_rows(table: Any, names: Sequence[str], n_perm: int, seed: int) -> Any:
    import pyarrow as pa

    got = _backend.within_group_scan_partials(*_matrix(table, names), n_perm, seed)
    return pa.table({k: pa.array(v, pa.binary()) for k, v in _partials_table(got).items()})


def _pair_rows(table: Any, names: Sequence[str], pairs: list[tuple[int, int]], n_perm: int,
               seed: int) -> Any:
    import pyarrow as pa

    ptr, rows, vptr, values, asks, reward = _matrix(table, names)
    both = and_columns(ptr, rows, vptr, values, pairs)
    got = _backend.within_group_scan_partials(*both, asks, reward, n_perm, seed)
    return pa.table({k: pa.array(v, pa.binary()) for k, v in _partials_table(got).items()})


def _rows_of(table: Any, names: Sequence[str]) -> Any:
    import pyarrow as pa

    index, columns, _, _ = _block_columns(table)
    out_names, out_rows = [], []
    for name in names:
        if name in columns:
            rows, values = columns[name]
            out_names.append(name.encode("utf-8", "surrogatepass"))
            out_rows.append(array("q", (index[r] for r, v in zip(rows, values, strict=True)
                                        if v != 0.0)).tobytes())
    return pa.table({"name": pa.array(out_names, pa.binary()),
                     "rows": pa.array(out_rows, pa.binary())})
