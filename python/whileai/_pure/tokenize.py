"""The one tokenisation rule both backends share (docs/kernels.md, "Tokens").

Normalise (default-ignorables removed, NFKC: ``normalize``), lowercase by a fixed table, then split
into runs of word code points (letters, marks, numbers in any script); each code point of an
unspaced script (Han, Kana, Thai, ...) is a token of its own. A token holding a Cyrillic or Greek
letter drawn like a Latin one (``CONFUSABLE``) is folded to Latin when every code point in it is
Latin, a mark, a number or such a letter, so "dоg" with a Cyrillic "о" reads "dog".

>>> tokenize("Where's order #4412? 注文")
['where', 's', 'order', '4412', '注', '文']
>>> tokenize("Order 4412", numbers=True)
['order', '<num>']
>>> tokenize("ｄ\u043eg con\u00adtami\u200bnation")
['dog', 'contamination']
"""

from __future__ import annotations

import re

from whileai._pure._unicode_data import CONFUSABLE, DIGIT, FOLD_OK, LOWER, RANGES, UNSPACED
from whileai._pure.normalize import char_class, normalize

__all__ = ["NUM_TOKEN", "check_texts", "lower", "tokenize"]

NUM_TOKEN = "<num>"
_LOWER_TABLE = {row[0]: row[1] for row in LOWER}
# Raw code point -> lowercase Latin lookalike, and everything else lowercased as usual.
_FOLD_TABLE = {**_LOWER_TABLE, **{row[0]: row[1] for row in CONFUSABLE}}
_CONFUSABLE = re.compile(char_class(tuple((cp, cp) for cp, _ in CONFUSABLE)))
_FOLD_OK = re.compile(char_class(FOLD_OK) + "+")


def _word_class(kinds: set[int]) -> str:
    return char_class(tuple((lo, hi) for lo, hi, kind in RANGES if kind in kinds))


_TOKEN = re.compile(f"{_word_class({UNSPACED})}|{_word_class({1, DIGIT})}+")
_ALL_DIGITS = re.compile(f"{_word_class({DIGIT})}+")


def tokenize(text: str, numbers: bool = False) -> list[str]:
    """Split ``text`` into lowercase tokens; with ``numbers=True`` digit runs become ``<num>``."""
    if not isinstance(text, str):
        raise TypeError(f"text must be str, got {type(text).__name__}")
    if text.isascii():
        tokens = _TOKEN.findall(text.lower())
    else:
        text = normalize(text)
        tokens = []
        # The lowercase table maps one code point to one, so spans line up with ``text``.
        for match in _TOKEN.finditer(text.translate(_LOWER_TABLE)):
            token = match.group()
            if not token.isascii():
                start, end = match.span()
                if _CONFUSABLE.search(text, start, end) and _FOLD_OK.fullmatch(text, start, end):
                    token = text[start:end].translate(_FOLD_TABLE)
            tokens.append(token)
    if numbers:
        return [NUM_TOKEN if _ALL_DIGITS.fullmatch(t) else t for t in tokens]
    return tokens


def lower(text: str) -> str:
    """``text`` lowercased by the committed one-to-one table (the same on every Python).

    Unlike ``str.lower()`` it maps each code point to one code point (a final sigma to "σ";
    U+0130, whose lowercase is two code points, stays), so a suffix keeps its length, and it
    follows the pinned Unicode version.

    >>> lower("ÀB İΣ")
    'àb İσ'
    """
    return text.lower() if text.isascii() else text.translate(_LOWER_TABLE)


def check_texts(texts: object) -> list[str]:
    """Return ``texts`` as a list, or raise ``TypeError`` naming the first non-string item."""
    if isinstance(texts, str) or not hasattr(texts, "__iter__"):
        raise TypeError(f"texts must be a list of str, got {type(texts).__name__}")
    items = list(texts)  # type: ignore[call-overload]
    for i, text in enumerate(items):
        if not isinstance(text, str):
            raise TypeError(f"texts[{i}] must be str, got {type(text).__name__}")
    return items
