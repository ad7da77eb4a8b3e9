"""How a person types: lower case, typos, clipped notes; literal values (ids, amounts, names)
are never mangled, so an agent can read them back.

>>> from whileai.simulations.world.values import draws
>>> typed("Please check order #W1234567.", "lowercase", draws(0, 1), ["#W1234567"])
'please check order #W1234567.'
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from whileai.simulations.world.values import Draw

__all__ = ["typed"]

_PUNCT = re.compile(r"[,.!]")
_ARTICLES = re.compile(r"\b(the|a|an|please|just|really|so|that)\b\s*", re.IGNORECASE)


def typed(text: str, typing: str, pick: Draw, spans: Sequence[str] = ()) -> str:
    """Apply the typing axis to the words around the literal values (ids, amounts, names)."""
    if typing not in ("lowercase", "typos", "clipped"):
        return text
    keep = sorted({s for s in spans if s and s in text}, key=len, reverse=True)
    if not keep:
        keep_none = _retype(text, typing, pick)
        return re.sub(r"\s+", " ", keep_none).strip() if typing == "clipped" else keep_none
    taken: list[tuple[int, int]] = []  # the literal spans, longest first, never overlapping
    for literal in keep:
        start = text.find(literal)
        while start >= 0:
            end = start + len(literal)
            if all(end <= a or start >= b for a, b in taken):
                taken.append((start, end))
            start = text.find(literal, end)
    out, at = [], 0
    for start, end in sorted(taken):
        out.append(_retype(text[at:start], typing, pick))
        out.append(text[start:end])
        at = end
    out.append(_retype(text[at:], typing, pick))
    joined = "".join(out)
    return re.sub(r"\s+", " ", joined).strip() if typing == "clipped" else joined


def _retype(text: str, typing: str, pick: Draw) -> str:
    if typing == "lowercase":
        return text.lower()
    if typing == "typos":
        out = []
        for word in text.split(" "):
            if len(word) >= 5 and word.isalpha() and pick.below(4) == 0:
                i = 1 + pick.below(len(word) - 3)
                word = word[:i] + word[i + 1] + word[i] + word[i + 2 :]
            out.append(word)
        return " ".join(out)
    return _PUNCT.sub("", _ARTICLES.sub("", text)).lower()
