"""JSON the server stores or walks, read strictly: one value, UTF-8, bounded, no NUL.

Python's ``json`` takes ``NaN`` and ``Infinity``, turns ``1e999`` into ``inf``, reads a
5,000-digit integer (which later readers refuse), recurses until ``RecursionError`` on deep
nesting, and a ``\\u0000`` in a string cannot go into PostgreSQL text. ``loads`` refuses all of
that with ``Invalid`` (a service error) naming where, so what is stored can be read back by every
reader (``zps.pull``, the pages, the Rust core's ``serde_json``).

>>> loads(b'{"a": [1, 2.5, "x"]}', where="line 1")
{'a': [1, 2.5, 'x']}
>>> loads(b'{"a": 1}{"b": 2}', where="line 3")
Traceback (most recent call last):
...
whileai.server.services.problems.Invalid: line 3: not one JSON value (Extra data at column 9)
"""

from __future__ import annotations

import json
import math
from typing import Any

from whileai.server.services.problems import Invalid

__all__ = ["MAX_DEPTH", "MAX_INT", "MIN_INT", "depth", "loads"]

MAX_DEPTH = 100  # objects and arrays inside each other
MIN_INT, MAX_INT = -(2**63), 2**64 - 1  # what serde_json (and SQL bigints) hold exactly
# Only text with a run of 19 digits or an exponent of 3 digits can hold a number out of range:
# only then does the decoder that checks every number run (it is a fifth as fast). The shapes
# are found with one ``bytes.translate`` and a few ``find``s, ten times faster than a regex.
_SHAPES = bytes(48 if 48 <= b <= 57 else 101 if b in (69, 101) else b if b in (43, 45) else 32
                for b in range(256))  # digit -> "0", e/E -> "e", + and - kept, else space
_SUSPECT = (b"0" * 19, b"e000", b"e+000", b"e-000")


class _Refused(ValueError):
    """A number or constant out of range (turned into ``Invalid`` by ``loads``)."""


def _constant(name: str) -> Any:
    raise _Refused(f"{name} is not JSON")


def _integer(text: str) -> int:
    if len(text) > 21 or not MIN_INT <= int(text) <= MAX_INT:
        raise _Refused(f"the integer {text[:30]}{'...' if len(text) > 30 else ''} is out of "
                       f"range ({MIN_INT} to {MAX_INT})")
    return int(text)


def _number(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _Refused(f"the number {text[:30]} is out of range of a double")
    return value


def depth(value: Any) -> int:
    """How deep objects and arrays nest in ``value`` (0 for a scalar), without recursion.

    >>> depth({"a": [1, {"b": []}]})
    4
    """
    deepest = 0
    stack = [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        deepest = max(deepest, level)
        stack.extend((child, level + 1) for child in children if isinstance(child, (dict, list)))
    return deepest


_PLAIN = json.JSONDecoder(parse_constant=_constant)
_CHECKING = json.JSONDecoder(parse_constant=_constant, parse_int=_integer, parse_float=_number)


def loads(data: bytes | str, *, where: str) -> Any:
    """The one JSON value in ``data``, checked as the module docstring says.

    Raises:
        Invalid: naming ``where`` and what is wrong.
    """
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise Invalid(f"{where}: not UTF-8 (byte {exc.start})") from None
    if b"\x00" in raw or b"\\u0000" in raw:
        raise Invalid(f"{where}: holds a NUL character, which cannot be stored")
    shapes = raw.translate(_SHAPES)
    decoder = _CHECKING if any(s in shapes for s in _SUSPECT) else _PLAIN
    try:
        value = decoder.decode(text)
    except _Refused as exc:
        raise Invalid(f"{where}: {exc}") from None
    except json.JSONDecodeError as exc:
        what = "not one JSON value" if exc.msg == "Extra data" else "not JSON"
        raise Invalid(f"{where}: {what} ({exc.msg} at column {exc.colno})"
       ) from None
    except RecursionError:
        raise Invalid(f"{where}: nested deeper than {MAX_DEPTH} levels"
       ) from None
    except ValueError as exc:  # e.g. Python's limit on the digits of an integer
        raise Invalid(f"{where}: {exc}") from None
    if text.count("[") + text.count("{") > MAX_DEPTH and depth(value) > MAX_DEPTH:
        raise Invalid(f"{where}: nested deeper than {MAX_DEPTH} levels")
    return value
