"""Text normalisation before tokenising (docs/kernels.md, "Tokens"): the same in both backends.

Default-ignorable code points (zero-width space and joiners, soft hyphen, bidi controls,
variation selectors, tags, ...) are removed, then the text is put in NFKC by the committed tables
of ``_unicode_data`` (never the runtime's ``unicodedata``, whose Unicode version varies with the
Python version), so full-width letters, ligatures and decomposed accents read as plain letters.
A text holding no code point that could change is returned as it is.

>>> normalize("ﬁne ｃａｆｅ\u0301 con\u00adtami\u200bnation")
'fine café contamination'
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from whileai._pure._unicode_data import CCC, COMPOSE, DECOMP, IGNORABLE, UNSTABLE

__all__ = ["char_class", "normalize"]

# Hangul syllables: composed and decomposed by arithmetic (Unicode chapter 3.12).
S_BASE, L_BASE, V_BASE, T_BASE = 0xAC00, 0x1100, 0x1161, 0x11A7
L_COUNT, V_COUNT, T_COUNT = 19, 21, 28
N_COUNT = V_COUNT * T_COUNT
S_COUNT = L_COUNT * N_COUNT


def char_class(ranges: Iterable[tuple[int, ...]]) -> str:
    """A regex character class matching the code points of ``(first, last)`` ranges."""
    parts = []
    for lo, hi in ranges:
        first, last = re.escape(chr(lo)), re.escape(chr(hi))
        parts.append(first if lo == hi else f"{first}-{last}")
    return "[" + "".join(parts) + "]"


_UNSTABLE = re.compile(char_class(UNSTABLE))
_IGNORABLE = frozenset(cp for lo, hi in IGNORABLE for cp in range(lo, hi + 1))
_CCC = {cp: ccc for lo, hi, ccc in CCC for cp in range(lo, hi + 1)}
_DECOMP = {row[0]: row[1:] for row in DECOMP}
_COMPOSE = {(a << 21) | b: c for a, b, c in COMPOSE}


def normalize(text: str) -> str:
    """Return ``text`` without default-ignorable code points, in NFKC (Unicode of the tables)."""
    if text.isascii() or _UNSTABLE.search(text) is None:
        return text
    return _compose(_decompose(text))


def _decompose(text: str) -> list[int]:
    """Full compatibility decomposition, ignorables dropped, in canonical order."""
    out: list[int] = []
    for ch in text:
        cp = ord(ch)
        if cp in _IGNORABLE:
            continue
        s = cp - S_BASE
        if 0 <= s < S_COUNT:
            out.append(L_BASE + s // N_COUNT)
            out.append(V_BASE + (s % N_COUNT) // T_COUNT)
            if s % T_COUNT:
                out.append(T_BASE + s % T_COUNT)
            continue
        parts = _DECOMP.get(cp)
        if parts is None:
            out.append(cp)
        else:
            out.extend(parts)
    # Canonical ordering: each run of non-starters sorted by combining class (stable).
    i, n = 0, len(out)
    while i < n:
        if not _CCC.get(out[i], 0):
            i += 1
            continue
        j = i
        while j < n and _CCC.get(out[j], 0):
            j += 1
        if j - i > 1:
            out[i:j] = sorted(out[i:j], key=lambda c: _CCC[c])
        i = j
    return out


def _pair(a: int, b: int) -> int | None:
    """The primary composite of ``a`` followed by ``b``, if any."""
    lead, vowel = a - L_BASE, b - V_BASE
    if 0 <= lead < L_COUNT and 0 <= vowel < V_COUNT:
        return S_BASE + (lead * V_COUNT + vowel) * T_COUNT
    s, t = a - S_BASE, b - T_BASE
    if 0 <= s < S_COUNT and s % T_COUNT == 0 and 0 < t < T_COUNT:
        return a + t
    return _COMPOSE.get((a << 21) | b)


def _compose(cps: list[int]) -> str:
    """Canonical composition: each character joins the last starter unless blocked."""
    out: list[int] = []
    starter = -1  # index in out of the last starter
    last_ccc = -1  # combining class of the last character after it; -1 when there is none
    for cp in cps:
        ccc = _CCC.get(cp, 0)
        if starter >= 0 and (last_ccc == -1 or (last_ccc != 0 and last_ccc < ccc)):
            composite = _pair(out[starter], cp)
            if composite is not None:
                out[starter] = composite
                continue
        if ccc == 0:
            starter, last_ccc = len(out), -1
        else:
            last_ccc = ccc
        out.append(cp)
    return "".join(map(chr, out))
