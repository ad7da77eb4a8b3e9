"""The rows of a Dataset batch, read by the JSONL reader's rules (a bad row raised on the
driver), and the kept rows leaving through the exit filter (:func:`kept_rows`).

A batch's rows are its columns, or the JSON text in one ``column`` (``ray.data.read_text``'s
``"text"``), which is read line by line as :class:`~whileai.rows.jsonl.JsonlReader` reads a
file: blank texts are no rows, a byte-order mark may open the first row only, and a text that is
not JSON, nests too deep or is not an object is refused. A task cannot number rows across the
dataset, so it sends its first problem back with its place in the batch (:func:`batch_rows`);
the driver, reading the batches in dataset order, adds the rows before it and raises the
``RowError`` one process would raise, the row named by its place in the dataset
(:func:`raise_problem`). Raising in the task instead would reach the caller wrapped in Ray's
errors, with the batch's rows printed into the log.

>>> import pyarrow as pa
>>> rows, at, problems = batch_rows(pa.table({"text": ['{"a": 1}', " ", "[2]"]}), "text")
>>> rows, at, [p["at"] for p in problems]
([{'a': 1}], [0], [2])
>>> raise_problem(problems, 10)  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
whileai.errors.RowError: rows[12] (dataset order): expected a JSON object ..., got list; fix ...
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from whileai.errors import ConfigError, RowError
from whileai.rows.jsonl import parse_row_text
from whileai.rows.jsonl_write import dumps_row
from whileai.rows.outbound import DROPPED_KEYS, outbound, outbound_check

__all__ = ["batch_rows", "kept_rows", "leaving_row", "leaving_text", "raise_problem", "unwritable"]

_BOM = "\ufeff"
_FIX = "; fix or drop that row"
Problem = dict[str, Any]


def batch_rows(table: Any,
               column: str | None) -> tuple[list[dict[str, Any]], list[int], list[Problem]]:
    """``(rows, at, problems)``: the batch's rows, each row's place in the batch, what was wrong.

    Reading stops at the first bad text (its problem last in ``problems``). A byte-order mark
    opening the batch's first text is read as the file reader reads line 1, and noted as a
    problem ``unless_first``: the driver raises it unless the batch starts the dataset.
    """
    if column is None:
        rows: list[dict[str, Any]] = table.to_pylist()
        return rows, list(range(len(rows))), []
    if column not in table.column_names:
        return [], [], [{"at": 0, "config": True, "message": (
            f"column={column!r} is not a column of the dataset (it has {table.column_names})")}]
    rows, at, problems = [], [], []
    for k, text in enumerate(table.column(column).to_pylist()):
        if not isinstance(text, str):
            problems.append({"at": k, "message": f": holds no JSON text ({text!r}){_FIX}"})
            break
        line = text + "\n"  # as the file reader sees a line: JSON's messages match its
        if k == 0 and text.startswith(_BOM):
            try:
                parse_row_text(line, where="")
            except RowError as exc:
                problems.append({"at": 0, "message": f"{exc}{_FIX}", "unless_first": True})
            line = line[len(_BOM):]
        if line.isspace():
            continue
        try:
            rows.append(parse_row_text(line, where=""))
        except RowError as exc:
            problems.append({"at": k, "message": f"{exc}{_FIX}"})
            break
        at.append(k)
    return rows, at, problems


def unwritable(row: dict[str, Any], text: str) -> str | None:
    """Why a kept row read from ``text`` cannot be written back as JSON (``NaN``, ``Infinity``),
    in ``dumps_row``'s words without the row's place; None when it can.

    >>> unwritable({"r": float("nan")}, '{"r": NaN}')[:36]
    ': cannot write field `r` as JSON: na'
    """
    if "NaN" not in text and "Infinity" not in text:
        return None
    try:
        dumps_row(row, where="")
    except RowError as exc:
        return str(exc)
    return None


def raise_problem(problems: list[Problem], offset: int) -> None:
    """Raise the first of a batch's problems that counts, its row named in the dataset.

    ``offset``: the dataset rows before the batch.

    Raises:
        RowError: a bad row, named ``rows[k] (dataset order)``.
        ConfigError: ``column=`` names no column of the dataset.
    """
    for problem in problems:
        if problem.get("unless_first") and offset == 0:
            continue
        if problem.get("config"):
            raise ConfigError(problem["message"])
        raise RowError(f"rows[{offset + problem['at']}] (dataset order){problem['message']}")


def leaving_text(text: Any, clean: Callable[[str], bool]) -> Any:
    """A kept row's JSON text through the exit filter (parsed only when it may need it)."""
    if not isinstance(text, str) or clean(text):
        return text
    return dumps_row(outbound(parse_row_text(text, where="kept row")), where="kept row")


def leaving_row(row: dict[str, Any]) -> dict[str, Any]:
    """A kept row of a Dataset of dicts through the exit filter (``rows.outbound``)."""
    return outbound(row)


def kept_rows(table: Any, column: str | None, flag: str, bookkeeping: tuple[str, ...]) -> Any:
    """The kept rows as they may leave (the exit filter, ``rows.outbound``): without the
    ``bookkeeping`` columns, nor the columns it drops (``rows.DROPPED_KEYS``: the teacher-only
    ``privileged`` block, the embedding); a ``column`` of JSON texts is filtered text by text."""
    import pyarrow as pa

    dropped = [*bookkeeping, *(c for c in table.column_names if c in DROPPED_KEYS)]
    kept = table.filter(table.column(flag)).drop_columns(dropped)
    if column is None or column not in kept.column_names:
        return kept
    clean = outbound_check()
    texts = [leaving_text(t, clean) for t in kept.column(column).to_pylist()]
    at = kept.column_names.index(column)
    return kept.set_column(at, column, pa.array(texts, pa.string()))
