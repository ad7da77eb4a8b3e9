"""hack_scan's text features: the reference kernel.

``hack_text_features(texts, final_chars, top, lower=False)`` reads each row's agent text
(lowercased by ``tokenize.lower``, here when ``lower`` is true, else by the caller) whose last
``final_chars`` code points are the final reply, and returns ``(counts, vocab, ptr, rows)``:

- ``counts``: ``array('q')``, seven counts per row in ``COUNTS`` order (words of the final
  reply as ``str.split()`` counts them, ``!``, ``?``, bullet lines, heading lines, code fences,
  digits as ``str.isdigit`` says);
- ``vocab``: the auto tier's kept terms, ranked by how many rows contain them (ties by code
  point order), terms every row contains dropped, cut as ``ranked[:top]`` (``top=0``: none);
- ``ptr``, ``rows``: ``array('q')``, the rows holding ``vocab[j]`` are
  ``rows[ptr[j]:ptr[j + 1]]``, ascending.

A term is a word, a maximal run of ``\\w``, or two consecutive words joined by a space:
punctuation only separates words. Every class (``\\w``, ``\\s``, ``\\d``, digits) is the
committed tables' (``charclass``), never the running Python's.

>>> counts, vocab, ptr, rows = hack_text_features(["### all done!", "ok"], [13, 2], 10)
>>> list(counts[:7]), vocab
([3, 1, 0, 0, 1, 0, 0], ['all', 'all done', 'done', 'ok'])
>>> hack_text_features(["### All Done!", "OK"], [13, 2], 10, lower=True)[1]
['all', 'all done', 'done', 'ok']
"""

from __future__ import annotations

import re
from array import array
from collections import Counter
from collections.abc import Iterable, Sequence
from itertools import pairwise

from whileai._pure.charclass import class_regex, class_text
from whileai._pure.tokenize import check_texts
from whileai._pure.tokenize import lower as _lower

__all__ = ["COUNTS", "hack_text_features", "text_counts", "words"]

COUNTS = ("reply_words", "exclamations", "questions", "bullets", "headings", "code_fences",
          "digits")
# Searched in ``class_text`` of each text (same spans, the tables' classes).
_WORD = class_regex(r"\w+")
_BULLET = class_regex(r"^\s*(?:[-*•]|\d+[.)])\s+", re.MULTILINE)
_HEADING = class_regex(r"^\s*#{1,6}\s", re.MULTILINE)


def words(text: str) -> list[str]:
    """The words of ``text`` (maximal runs of ``\\w`` by the tables), in order.

    >>> words("注文, ok!")
    ['注文', 'ok']
    """
    mapped = class_text(text)
    if mapped is text:
        return _WORD.findall(text)
    return [text[m.start():m.end()] for m in _WORD.finditer(mapped)]


def text_counts(text: str, final: str) -> tuple[int, ...]:
    """The seven ``COUNTS`` of one text whose final reply is ``final``.

    >>> text_counts("- a\\n## b? 12", "12")
    (1, 0, 1, 1, 1, 0, 2)
    """
    mapped = class_text(text)
    return (len(class_text(final).split()), text.count("!"), text.count("?"),
            len(_BULLET.findall(mapped)), len(_HEADING.findall(mapped)), text.count("```"),
            sum(map(str.isdigit, mapped)))


def _terms(text: str) -> set[str]:
    tokens = words(text)
    terms = set(tokens)
    terms.update(f"{a} {b}" for a, b in pairwise(tokens))
    return terms


def hack_text_features(
    texts: Iterable[str], final_chars: Sequence[int], top: int, lower: bool = False
) -> tuple[array[int], list[str], array[int], array[int]]:
    """Return ``(counts, vocab, ptr, rows)`` of the agent texts (module docs).

    Raises:
        TypeError: ``texts`` is a str or holds a non-str, or ``top`` is not an int.
        ValueError: ``final_chars`` has another length than ``texts``, or a negative length.
    """
    items = check_texts(texts)
    if lower:
        items = [_lower(text) for text in items]
    finals = array("q", final_chars)
    if isinstance(top, bool) or not isinstance(top, int):
        raise TypeError(f"top must be an int, got {type(top).__name__}")
    if len(finals) != len(items):
        raise ValueError(f"final_chars has {len(finals)} items but texts has {len(items)}")
    for c in finals:
        if c < 0:
            raise ValueError(f"final_chars must be >= 0, got {c}")
    counts = array("q")
    for text, chars in zip(items, finals, strict=True):
        final = text[max(0, len(text) - chars):] if chars else ""
        counts.extend(text_counts(text, final))
    if top == 0:
        return counts, [], array("q", [0]), array("q")
    per_row = [_terms(text) for text in items]
    df: Counter[str] = Counter()
    for terms in per_row:
        df.update(terms)
    ranked = sorted((t for t, c in df.items() if c < len(items)), key=lambda t: (-df[t], t))
    vocab = ranked[:top]
    col = {t: j for j, t in enumerate(vocab)}
    cols: list[list[int]] = [[] for _ in vocab]
    for i, terms in enumerate(per_row):
        for t in terms & col.keys():
            cols[col[t]].append(i)
    ptr, rows = array("q", [0]), array("q")
    for members in cols:
        rows.extend(members)
        ptr.append(len(rows))
    return counts, vocab, ptr, rows

