"""How deep a JSON value may nest, checked without recursion.

Python's ``json`` module and every recursive walk over a row (scrubbing, schema checks,
exports) fail with ``RecursionError`` somewhere near 1,000 levels. No row needs a tenth of
that, so every reader stops a value nested deeper than ``MAX_DEPTH`` with a ``RowError``
naming where it came from, and the writers turn a ``RecursionError`` into the same error.

>>> depth([{"a": [1, {"b": []}]}])  # list, dict, list, dict, list
5
>>> loads_limited('[[[1]]]', where="x.jsonl:3")
[[[1]]]
>>> loads_limited("[" * 300 + "]" * 300, where="x.jsonl:3")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
whileai.errors.RowError: x.jsonl:3: JSON nested deeper than 200 levels...
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

from whileai.errors import RowError

__all__ = ["MAX_DEPTH", "check_depth", "deep_error", "depth", "loads_limited", "too_deep"]

MAX_DEPTH = 200  # rows nest ~10 levels; past 200 a walk risks Python's recursion limit
# The C scanner behind ``json.loads``, called directly: for a short value (a message list, tool
# arguments) the wrapper's two whitespace regexes cost about as much as the parse itself.
_scan_once = json.JSONDecoder().scan_once  # type: ignore[attr-defined]


def _loads(text: str | bytes) -> Any:
    """``json.loads``: the same value, or the same error (taken from ``json.loads`` itself)."""
    if isinstance(text, str):
        try:
            value, end = _scan_once(text, 0)
        except StopIteration:  # leading whitespace, a BOM, or not JSON
            return json.loads(text)
        if end == len(text):
            return value
    return json.loads(text)  # bytes, trailing whitespace or extra data


def _levels(value: Any) -> Iterator[int]:
    """The nesting level of every container in ``value``, walked iteratively (no recursion
    limit), so a caller can stop at the first level that matters."""
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, Mapping):
            children: Any = item.values()
        elif isinstance(item, (list, tuple)):
            children = item
        else:
            continue
        level += 1
        yield level
        stack.extend((child, level) for child in children)


def depth(value: Any) -> int:
    """Nesting depth of dicts/lists/tuples in ``value`` (a scalar is 0).

    >>> depth(1), depth([]), depth({"a": {"b": 1}})
    (0, 1, 2)
    """
    return max(_levels(value), default=0)


def too_deep(value: Any, limit: int = MAX_DEPTH) -> bool:
    """Whether ``value`` nests deeper than ``limit`` (stops at the first path that does).

    >>> too_deep([[1]], limit=1), too_deep([[1]], limit=2)
    (True, False)
    """
    return any(level > limit for level in _levels(value))


def _message(where: str) -> str:
    return (f"{where}: JSON nested deeper than {MAX_DEPTH} levels; no row needs that much "
            "nesting: flatten the value or store it as a string.")


def check_depth(value: Any, *, where: str) -> None:
    """Raise ``RowError`` naming ``where`` when ``value`` nests deeper than ``MAX_DEPTH``.

    >>> check_depth({"a": [1]}, where="row 0")
    """
    if too_deep(value):
        raise RowError(_message(where))


def deep_error(where: str) -> RowError:
    """The ``RowError`` to raise in place of a ``RecursionError`` met while handling a value."""
    return RowError(_message(where))


def loads_limited(text: str | bytes, *, where: str) -> Any:
    """``json.loads`` that refuses values nested deeper than ``MAX_DEPTH`` with ``RowError``.

    Other malformed JSON raises ``json.JSONDecodeError`` as ``json.loads`` does. The depth walk
    runs only when the text holds more opening brackets than the limit, so ordinary lines pay
    two substring counts.
    """
    try:
        value = _loads(text)
    except RecursionError:
        raise deep_error(where) from None
    opening = (text.count(b"[") + text.count(b"{") if isinstance(text, bytes)
               else text.count("[") + text.count("{"))
    if opening > MAX_DEPTH and too_deep(value):
        raise deep_error(where)
    return value
