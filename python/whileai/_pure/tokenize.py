"""The one tokenisation rule both backends share (docs/kernels.md, "Tokens").

Lowercase by a fixed table, then split into runs of word code points (letters, marks, numbers in
any script); each code point of an unspaced script (Han, Kana, Thai, ...) is a token of its own.

>>> tokenize("Where's order #4412? 注文")
['where', 's', 'order', '4412', '注', '文']
>>> tokenize("Order 4412", numbers=True)
['order', '<num>']
"""

from __future__ import annotations

import re

from whileai._pure._unicode_data import DIGIT, LOWER, RANGES, UNSPACED

__all__ = ["NUM_TOKEN", "check_texts", "tokenize"]

NUM_TOKEN = "<num>"
_LOWER_TABLE = dict(LOWER)


def _char_class(kinds: set[int]) -> str:
    parts = []
    for lo, hi, kind in RANGES:
        if kind in kinds:
            first, last = re.escape(chr(lo)), re.escape(chr(hi))
            parts.append(first if lo == hi else f"{first}-{last}")
    return "[" + "".join(parts) + "]"


_TOKEN = re.compile(f"{_char_class({UNSPACED})}|{_char_class({1, DIGIT})}+")
_ALL_DIGITS = re.compile(f"{_char_class({DIGIT})}+")


def tokenize(text: str, numbers: bool = False) -> list[str]:
    """Split ``text`` into lowercase tokens; with ``numbers=True`` digit runs become ``<num>``."""
    if not isinstance(text, str):
        raise TypeError(f"text must be str, got {type(text).__name__}")
    tokens = _TOKEN.findall(text.translate(_LOWER_TABLE))
    if numbers:
        return [NUM_TOKEN if _ALL_DIGITS.fullmatch(t) else t for t in tokens]
    return tokens


def check_texts(texts: object) -> list[str]:
    """Return ``texts`` as a list, or raise ``TypeError`` naming the first non-string item."""
    if isinstance(texts, str) or not hasattr(texts, "__iter__"):
        raise TypeError(f"texts must be a list of str, got {type(texts).__name__}")
    items = list(texts)  # type: ignore[call-overload]
    for i, text in enumerate(items):
        if not isinstance(text, str):
            raise TypeError(f"texts[{i}] must be str, got {type(text).__name__}")
    return items
