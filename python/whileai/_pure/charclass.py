"""The pinned ``re``/``str`` character classes, and patterns that read only them.

``\\w``, ``\\s``, ``\\d``, ``str.isdigit`` and ``re.IGNORECASE``'s letters follow the Unicode
version of the Python that runs them (3.10: 13.0, 3.11: 14.0, 3.12: 15.0, 3.13: 15.1). Both
backends read the committed tables of ``_unicode_data`` instead (one pinned version,
``UNICODE_VERSION``; docs/kernels.md, "One Unicode version"): the Rust kernels directly, the
pure ones by searching ``class_text(text)``, where each non-ASCII code point stands replaced by
a stand-in of its class in the tables (``PinnedPattern``, ``class_regex``). ``pinned_regex`` is
the other construction, the reference the tests hold them to: it rewrites a pattern so that
``re`` consults none of its own tables (``\\w \\s \\d \\W \\S \\D`` as explicit classes,
``\\b`` and ``\\B`` as lookarounds over the word class, and under ``re.IGNORECASE`` each ASCII
letter as the explicit set of what matches it: ``k``, ``K`` and U+212A KELVIN SIGN).

>>> pinned_regex(r"\\btests?\\s+pass\\b", re.IGNORECASE).search("All TESTS pass.").group()
'TESTS pass'
>>> pinned_regex(r"\\w+").findall("x\\U00031350y")  # CJK Extension H: Unicode 15.0, not 14.0
['x', 'y']
>>> count_digits("²3٣"), count_words(" a\\u3000b\\n")
(3, 2)
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from whileai._pure._unicode_data import (
    RE_CLASSES,
    RE_DECIMAL,
    RE_DIGIT,
    RE_FOLD,
    RE_SPACE,
    RE_WORD,
    UNICODE_VERSION,
)

__all__ = ["STAND_INS", "UNICODE_VERSION", "PinnedPattern", "class_regex", "class_text",
           "count_digits", "count_words", "pinned_regex"]

_SUPPORTED_FLAGS = re.IGNORECASE | re.MULTILINE


def _ranges(bit: int) -> list[tuple[int, int]]:
    """The ``(first, last)`` ranges of the code points holding class ``bit``, merged."""
    out: list[tuple[int, int]] = []
    for lo, hi, bits in RE_CLASSES:
        if bits & bit:
            if out and out[-1][1] == lo - 1:
                out[-1] = (out[-1][0], hi)
            else:
                out.append((lo, hi))
    return out


def _members(ranges: Iterable[tuple[int, int]]) -> str:
    """The inside of a character class matching ``ranges``."""
    return "".join(re.escape(chr(lo)) if lo == hi else f"{re.escape(chr(lo))}-{re.escape(chr(hi))}"
                   for lo, hi in ranges)


def _code_point_ranges(cps: Iterable[int]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for cp in sorted(set(cps)):
        if out and out[-1][1] == cp - 1:
            out[-1] = (out[-1][0], cp)
        else:
            out.append((cp, cp))
    return out


_CLASS_BITS = {"w": RE_WORD, "s": RE_SPACE, "d": RE_DECIMAL}


def _escapes(inner: dict[str, str]) -> dict[str, str]:
    """What each class escape becomes, given the inside of the ``\\w``, ``\\s``, ``\\d`` classes."""
    word = f"[{inner['w']}]"
    return {
        **{name: f"[{members}]" for name, members in inner.items()},
        **{name.upper(): f"[^{members}]" for name, members in inner.items()},
        "b": f"(?:(?<={word})(?!{word})|(?<!{word})(?={word}))",
        "B": f"(?:(?<={word})(?={word})|(?<!{word})(?!{word}))",
    }


_INNER = {name: _members(_ranges(bit)) for name, bit in _CLASS_BITS.items()}
_ESCAPES = _escapes(_INNER)
# The class alphabet of ``class_text``: every non-ASCII code point becomes a stand-in of its
# class in the tables, one code point whose class and case no Unicode version since 1.1 has
# changed (no class: SECTION SIGN; word: HEBREW LETTER ALEF; word and digit: SUPERSCRIPT TWO;
# word, digit and decimal: ARABIC-INDIC DIGIT ZERO; space: IDEOGRAPHIC SPACE), except the letters
# re.IGNORECASE equates with ASCII ones and U+2022 BULLET (which the bullet pattern names; no
# class, no case), kept as they are. Over that alphabet ``re``'s own
# ``\\w \\s \\d \\b`` and case folding give the tables' answers on every Python (tested), so a
# pattern runs as written and compiles as fast as it does for ``re``. The text keeps its length.
_KEEP = frozenset([*(cp for cp, _ in RE_FOLD), 0x2022])
STAND_INS = {0: 0xA7, RE_WORD: 0x5D0, RE_SPACE: 0x3000, RE_WORD | RE_DIGIT: 0xB2,
             RE_WORD | RE_DECIMAL | RE_DIGIT: 0x660}
_STARTS = [lo for lo, _, _ in RE_CLASSES]


def _bits(cp: int) -> int:
    """The class bits of one code point in the tables (0 for none)."""
    i = bisect_right(_STARTS, cp) - 1
    return RE_CLASSES[i][2] if i >= 0 and cp <= RE_CLASSES[i][1] else 0


class _ClassMap(dict[int, int]):
    """``str.translate``'s table for ``class_text``, ASCII and ``_KEEP`` mapped to themselves:
    a memo filled as code points are met (each value a function of its key alone), so every
    code point seen before is a lookup in C."""

    def __missing__(self, cp: int) -> int:
        out = cp if cp < 0x80 or cp in _KEEP else STAND_INS[_bits(cp)]
        self[cp] = out
        return out


_CLASS_MAP = _ClassMap()
_LITERAL_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "f": "\f", "v": "\v"}
# What re.IGNORECASE matches with each lowercase ASCII letter (its two cases and the tables').
_CASES: dict[int, set[int]] = {c: {c, c - 32} for c in range(ord("a"), ord("z") + 1)}
for _cp, _letter in RE_FOLD:
    _CASES[_letter].add(_cp)
_REPEAT = re.compile(r"\{\d*(?:,\d*)?\}")


def _folded(cp: int) -> set[int]:
    """The code points ``re.IGNORECASE`` matches with the ASCII character ``cp``."""
    low = cp + 32 if ord("A") <= cp <= ord("Z") else cp
    return _CASES.get(low, {cp})


class _Translator:
    """One pass over a pattern, writing its pinned equivalent (``pinned_regex``)."""

    def __init__(self, pattern: str, ignorecase: bool) -> None:
        self.src, self.at, self.ignorecase = pattern, 0, ignorecase
        self.out: list[str] = []

    def fail(self, what: str) -> ValueError:
        return ValueError(f"pattern {self.src!r} at position {self.at}: {what} is not covered by "
                          "the committed Unicode tables; write the pattern without it")

    def literal(self, ch: str) -> str:
        """A literal character, as a class of its case variants under IGNORECASE."""
        if not ch.isascii() and self.ignorecase:
            raise self.fail(f"the non-ASCII character {ch!r} under IGNORECASE")
        if not self.ignorecase:
            return re.escape(ch)
        variants = _folded(ord(ch))
        if len(variants) == 1:
            return re.escape(ch)
        return f"[{_members(_code_point_ranges(variants))}]"

    def escape(self, in_class: bool) -> tuple[str, int | None]:
        """Read the escape after a backslash: (replacement, literal code point or None)."""
        if self.at >= len(self.src):
            raise self.fail("a trailing backslash")
        e = self.src[self.at]
        self.at += 1
        if e in _LITERAL_ESCAPES:
            return "", ord(_LITERAL_ESCAPES[e])
        if e in _ESCAPES and not (in_class and e in "bB"):
            return _ESCAPES[e], None
        if not e.isascii() or e.isalnum():
            raise self.fail(f"the escape \\{e}")
        return "", ord(e)

    def char_set(self) -> str:
        """A ``[...]`` class (the ``[`` read): explicit members, folded under IGNORECASE."""
        negated = self.src.startswith("^", self.at)
        self.at += negated
        cps: set[int] = set()
        inner: list[str] = []
        first = True
        while True:
            if self.at >= len(self.src):
                raise self.fail("an unclosed class")
            c = self.src[self.at]
            self.at += 1
            if c == "]" and not first:
                break
            first = False
            lo: int
            if c == "\\":
                category, cp = self.escape(in_class=True)
                if cp is None:
                    if category.startswith("[^"):
                        raise self.fail("a negated category inside a class")
                    inner.append(category[1:-1])
                    continue
                lo = cp
            else:
                lo = ord(c)
            hi = lo
            after = self.src[self.at + 1 : self.at + 2]
            if self.src.startswith("-", self.at) and after not in ("]", ""):
                self.at += 1
                h = self.src[self.at]
                self.at += 1
                if h == "\\":
                    category, cp = self.escape(in_class=True)
                    if cp is None:
                        raise self.fail("a category as a range end")
                    hi = cp
                else:
                    hi = ord(h)
                if hi < lo:
                    raise self.fail("a reversed range")
            if hi >= 0x80 and self.ignorecase:
                raise self.fail(f"the non-ASCII character {chr(hi)!r} under IGNORECASE")
            for cp in range(lo, hi + 1):
                cps |= _folded(cp) if self.ignorecase else {cp}
        body = _members(_code_point_ranges(cps)) + "".join(inner)
        return f"[{'^' if negated else ''}{body}]"

    def group_open(self) -> str:
        """The head of a group (the ``(`` read): kept as written, its name untouched."""
        if not self.src.startswith("?", self.at):
            return "("
        for head in ("?:", "?=", "?!", "?<=", "?<!"):
            if self.src.startswith(head, self.at):
                self.at += len(head)
                return "(" + head
        if self.src.startswith("?P<", self.at):
            end = self.src.find(">", self.at)
            if end < 0:
                raise self.fail("an unclosed group name")
            head, self.at = self.src[self.at : end + 1], end + 1
            return "(" + head
        raise self.fail("this group kind (inline flags, conditionals, references)")

    def run(self) -> str:
        while self.at < len(self.src):
            c = self.src[self.at]
            self.at += 1
            if c == "\\":
                replacement, cp = self.escape(in_class=False)
                self.out.append(replacement if cp is None else self.literal(chr(cp)))
            elif c == "[":
                self.out.append(self.char_set())
            elif c == "(":
                self.out.append(self.group_open())
            elif c == "{" and (m := _REPEAT.match(self.src, self.at - 1)):
                self.out.append(m.group())
                self.at = m.end()
            elif c in ".^$|)*+?":
                self.out.append(c)
            else:
                self.out.append(self.literal(c))
        return "".join(self.out)


def pinned_regex(pattern: str, flags: int = 0) -> re.Pattern[str]:
    """Compile ``pattern`` so that it matches by the committed tables, not the running ``re``'s.

    Args:
        pattern: a regular expression of ASCII letters (under ``re.IGNORECASE``), classes,
            groups (plain, ``(?:``, ``(?P<name>``, lookarounds), alternation, quantifiers and
            the escapes ``\\w \\s \\d \\W \\S \\D \\b \\B`` and ``\\n \\t \\r \\f \\v``.
        flags: ``re.IGNORECASE`` and ``re.MULTILINE`` only.

    Returns:
        The compiled pattern; it matches what ``re.compile(pattern, flags)`` matches on a
        Python whose Unicode is ``UNICODE_VERSION``, on every Python.

    Raises:
        ValueError: a construct or flag whose meaning depends on the running ``re``'s tables
            and that this rewrite does not cover (inline flags, ``\\N{...}``, a non-ASCII
            letter under ``re.IGNORECASE``, ...).

    >>> pinned_regex("ok", re.IGNORECASE).fullmatch("O\\u212a") is not None  # KELVIN SIGN
    True
    >>> pinned_regex("(?i)ok")
    Traceback (most recent call last):
    ...
    ValueError: pattern '(?i)ok' at position 1: this group kind (inline flags, ...) is not ...
    """
    if flags & ~_SUPPORTED_FLAGS:
        raise ValueError(f"pinned_regex takes re.IGNORECASE and re.MULTILINE only, got {flags!r}")
    translated = _Translator(pattern, bool(flags & re.IGNORECASE)).run()
    return re.compile(translated, flags & re.MULTILINE)


def class_regex(pattern: str, flags: int = 0) -> re.Pattern[str]:
    """``pattern`` compiled for texts read through ``class_text``: an ASCII pattern (or one of
    the code points ``class_text`` keeps), as written.

    Over ``class_text``'s alphabet ``re`` matches what ``pinned_regex`` matches over the text
    itself (the same spans and groups), at ``re``'s own compile and search speed; read spans
    and group names from the match, and group texts from the original text by their spans.

    Raises:
        ValueError: a non-ASCII pattern character (it could only meet a stand-in), or a flag
            other than ``re.IGNORECASE`` and ``re.MULTILINE``.

    >>> class_regex(r"\\bok\\b", re.IGNORECASE).search(class_text("注文 OK")).span()
    (3, 5)
    """
    if flags & ~_SUPPORTED_FLAGS:
        raise ValueError(f"class_regex takes re.IGNORECASE and re.MULTILINE only, got {flags!r}")
    at = next((i for i, c in enumerate(pattern) if ord(c) >= 0x80 and ord(c) not in _KEEP), None)
    if at is not None:
        raise ValueError(f"pattern {pattern!r} at position {at}: a non-ASCII character cannot "
                         "match a text read through class_text; write the pattern in ASCII")
    return re.compile(pattern, flags)


def class_text(text: str) -> str:
    """``text`` with each non-ASCII code point replaced by its class in ``class_regex``'s
    alphabet (the letters ``re.IGNORECASE`` equates with ASCII ones kept), the same length.

    >>> class_text("ok İ 注文 ٣ ² x\\u3000\\ud800")
    'ok İ אא ٠ ² x\\u3000§'

    """
    return text if text.isascii() else text.translate(_CLASS_MAP)


@dataclass(frozen=True, slots=True)
class PinnedPattern:
    """A pattern matched by the committed tables on any text: ``class_regex`` over ``class_text``.

    ``search``, ``match`` and ``finditer`` take the original text and return ``re`` matches over
    its ``class_text``: spans, ``lastgroup`` and which named groups took part are the original's;
    take a group's text from the original by its span. ``source`` is the pattern as written
    (what the Rust matcher compiles).

    >>> p = PinnedPattern.compile(r"\\bsk-\\w+", re.IGNORECASE)
    >>> text = "key: SK-注文x"
    >>> m = p.search(text)
    >>> text[m.start():m.end()], p.source
    ('SK-注文x', '\\\\bsk-\\\\w+')
    """

    source: str
    regex: re.Pattern[str]

    @classmethod
    def compile(cls, source: str, flags: int = 0) -> PinnedPattern:
        """Compile ``source`` (``class_regex``'s subset; ``re.IGNORECASE``, ``re.MULTILINE``)."""
        return cls(source=source, regex=class_regex(source, flags))

    def search(self, text: str, pos: int = 0) -> re.Match[str] | None:
        return self.regex.search(class_text(text), pos)

    def match(self, text: str, pos: int = 0) -> re.Match[str] | None:
        return self.regex.match(class_text(text), pos)

    def finditer(self, text: str) -> Iterator[re.Match[str]]:
        return self.regex.finditer(class_text(text))


def count_digits(text: str) -> int:
    """How many code points of ``text`` are digits (``str.isdigit`` at the pinned Unicode).

    >>> count_digits("a1²")
    2
    """
    return sum(map(str.isdigit, class_text(text)))


def count_words(text: str) -> int:
    """``len(text.split())`` at the pinned Unicode: runs of code points that are not ``\\s``.

    >>> count_words("two words\\u2028")
    2
    """
    return len(class_text(text).split())
