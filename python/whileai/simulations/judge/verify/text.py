"""Text verifiers: exact match, inclusion, a regular expression, a multiple-choice letter.

>>> ExactMatch()({"final_text": "  Paris. ", "answer": "paris"})["reward"]
1.0
>>> MultipleChoice()({"final_text": "The answer is (c).", "answer": "C"})["reward"]
1.0
"""

from __future__ import annotations

import re
from typing import Any

from whileai.errors import ConfigError
from whileai.simulations.judge.verify.base import Verifier

__all__ = ["ExactMatch", "Includes", "MultipleChoice", "Regex", "normalize_text"]


def normalize_text(text: str, *, case_sensitive: bool = False) -> str:
    """Collapse whitespace, trim, drop trailing ``.``/``!``, optionally lowercase.

    >>> normalize_text("  Hello   World! ")
    'hello world'
    """
    out = " ".join(str(text).split()).rstrip(".!").strip()
    return out if case_sensitive else out.casefold()


def _golds(gold: Any) -> list[str]:
    return [str(g) for g in gold] if isinstance(gold, (list, tuple, set)) else [str(gold)]


class ExactMatch(Verifier):
    """1 when the normalised candidate equals the (or any listed) gold answer."""

    def __init__(
        self, *, field: str | None = None, case_sensitive: bool = False, name: str | None = None
    ) -> None:
        super().__init__(field=field, name=name)
        self.case_sensitive = case_sensitive

    def check(self, candidate: str, gold: Any, row: dict[str, Any]) -> Any:
        got = normalize_text(candidate, case_sensitive=self.case_sensitive)
        for g in _golds(gold):
            if got == normalize_text(g, case_sensitive=self.case_sensitive):
                return 1.0, f"exact match: {g!r:.60}"
        return 0.0, f"{got!r:.60} != {_golds(gold)[0]!r:.60}"


class Includes(Verifier):
    """1 when the candidate contains the gold text (``require="all"``: every listed text).

    ``text=`` fixes the needle instead of reading a gold from the row.
    """

    def __init__(
        self,
        text: str | list[str] | None = None,
        *,
        field: str | None = None,
        require: str = "any",
        case_sensitive: bool = False,
        name: str | None = None,
    ) -> None:
        super().__init__(field=field, name=name)
        if require not in ("any", "all"):
            raise ConfigError(f"require must be 'any' or 'all', got {require!r}")
        self.text, self.require, self.case_sensitive = text, require, case_sensitive
        self.needs_gold = text is None

    def check(self, candidate: str, gold: Any, row: dict[str, Any]) -> Any:
        needles = _golds(self.text if self.text is not None else gold)
        hay = normalize_text(candidate, case_sensitive=self.case_sensitive)
        found = [n for n in needles if normalize_text(n, case_sensitive=self.case_sensitive) in hay]
        ok = bool(found) if self.require == "any" else len(found) == len(needles)
        missing = [n for n in needles if n not in found]
        return (1.0, f"includes {found[0]!r:.60}") if ok else (0.0, f"missing {missing[:3]!r:.80}")


class Regex(Verifier):
    """1 when ``pattern`` matches the candidate (``fullmatch=True``: the whole stripped text)."""

    needs_gold = False

    def __init__(
        self, pattern: str, *, flags: int = 0, fullmatch: bool = False, name: str | None = None
    ) -> None:
        super().__init__(name=name)
        try:
            self.pattern = re.compile(pattern, flags)
        except re.error as exc:
            raise ConfigError(f"Regex pattern {pattern!r} does not compile: {exc}") from None
        self.fullmatch = fullmatch

    def check(self, candidate: str, gold: Any, row: dict[str, Any]) -> Any:
        text = candidate.strip() if self.fullmatch else candidate
        hit = self.pattern.fullmatch(text) if self.fullmatch else self.pattern.search(text)
        return (1.0, "pattern matched") if hit else (0.0, f"no match for /{self.pattern.pattern}/")


_CHOICE_PATTERNS = (
    r"answer\s*(?:is|:)?\s*[\(\[]?\s*([{letters}])\b",
    r"^\s*[\(\[]?([{letters}])[\)\]\.:]?(?:\s|$)",
    r"[\(\[]([{letters}])[\)\]]",
    r"\b([{letters}])\s*$",
)


class MultipleChoice(Verifier):
    """Extract the chosen letter (``(B)``, ``answer: B``, ``B.``) and compare with the gold."""

    def __init__(
        self, *, choices: str = "ABCDEFGH", field: str | None = None, name: str | None = None
    ) -> None:
        super().__init__(field=field, name=name)
        self.choices = choices.upper()
        letters = re.escape(self.choices) + re.escape(self.choices.lower())
        self.patterns = [
            re.compile(p.format(letters=letters), re.IGNORECASE | re.MULTILINE)
            for p in _CHOICE_PATTERNS
        ]

    def pick(self, text: str) -> str | None:
        """The letter a reply chose, or None."""
        for pattern in self.patterns:
            found = pattern.findall(text)
            if found:
                return (
                    str(found[-1]).upper()
                    if pattern is self.patterns[-1]
                    else str(found[0]).upper()
                )
        return None

    def check(self, candidate: str, gold: Any, row: dict[str, Any]) -> Any:
        want = self.pick(str(gold)) or str(gold).strip().upper()[:1]
        got = self.pick(candidate)
        if got is None:
            return 0.0, "no choice letter found in the reply"
        return (1.0 if got == want else 0.0), f"chose {got}, gold {want}"
