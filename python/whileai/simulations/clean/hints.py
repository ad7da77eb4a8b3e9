"""Literal prefilters for case-insensitive patterns: skip a regex search that cannot match.

A pattern compiled with ``re.IGNORECASE`` that can only match where one of a few ASCII words
occurs (``tests?\\s+pass`` needs ``test``) is searched only when one of them occurs in the
lowercased text. Python's ``re`` equates four non-ASCII code points with ASCII letters that
``str.lower()`` does not turn into them (U+0130, U+0131, U+017F, U+212A); in a text holding
any of them no hint is checked and every pattern is searched, so the prefilter never changes a
match.

>>> low = hint_text("All Tests PASS")
>>> may_match(low, ("test",)), may_match(low, ("verified",)), may_match(None, ("x",))
(True, False, True)
"""

from __future__ import annotations

__all__ = ["hint_text", "may_match"]

_CASE_SPECIALS = ("\u0130", "\u0131", "\u017f", "\u212a")


def hint_text(text: str) -> str | None:
    """``text.lower()`` when literal hints can be checked in it, else None (search everything)."""
    if not text.isascii() and any(c in text for c in _CASE_SPECIALS):
        return None
    return text.lower()


def may_match(low: str | None, hints: tuple[str, ...]) -> bool:
    """False only when no hint occurs in ``low`` (a :func:`hint_text`), so the search is moot."""
    return low is None or any(h in low for h in hints)
