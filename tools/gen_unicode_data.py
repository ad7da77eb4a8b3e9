"""Generate every Unicode table of both backends from one pinned Unicode database.

The one generator of the character tables: the tokenizer's (word classes, lowercase, NFKC data:
decompositions, canonical combining classes, compositions, confusables) and the ``re``/``str``
classes of the trace-flag patterns and the hack-scan text features (``\\w``, ``\\s``, ``\\d``,
``str.isdigit``, and the non-ASCII code points ``re.IGNORECASE`` equates with an ASCII letter).
The tables are committed and both backends read only them, so a Python or Rust upgrade never
changes an answer (docs/kernels.md, "One Unicode version").

The pinned database is CPython 3.11's (Unicode ``PINNED``, Debian bookworm's ``python3``): the
generator reads ``unicodedata``, ``str`` methods and ``re`` of the Python running it, and refuses
to run on one with another Unicode version, so the output is reproducible byte for byte. Moving
to a newer Unicode is a deliberate change: set ``PINNED``, check ``DEFAULT_IGNORABLE``, re-run
with a Python of that version, then update the golden vectors and bump the embedder version.

    python tools/gen_unicode_data.py           # write the tables
    python tools/gen_unicode_data.py --check   # exit 1 when the committed tables differ
"""

from __future__ import annotations

import re
import string
import sys
import textwrap
import unicodedata
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PY_OUT = ROOT / "python/whileai/_pure/_unicode_data.py"
RS_OUT = ROOT / "rust/src/unicode_data.rs"
RS_CLASSES_OUT = ROOT / "rust/src/pychars.rs"
PINNED = "14.0.0"

# Scripts written without spaces between words: every code point is a token of its own.
UNSPACED_BLOCKS = [
    (0x0E00, 0x0E7F),  # Thai
    (0x0E80, 0x0EFF),  # Lao
    (0x0F00, 0x0FFF),  # Tibetan
    (0x1000, 0x109F),  # Myanmar
    (0x1780, 0x17FF),  # Khmer
    (0x2E80, 0x2FDF),  # CJK and Kangxi radicals
    (0x3005, 0x3007),  # ideographic iteration mark, closing mark, number zero
    (0x3021, 0x3029),  # Hangzhou numerals
    (0x3038, 0x303B),
    (0x3040, 0x30FF),  # Hiragana, Katakana
    (0x31F0, 0x31FF),  # Katakana phonetic extensions
    (0x3400, 0x4DBF),  # CJK extension A
    (0x4E00, 0x9FFF),  # CJK unified ideographs
    (0xA000, 0xA4CF),  # Yi
    (0xF900, 0xFAFF),  # CJK compatibility ideographs
    (0xFF66, 0xFF9F),  # halfwidth Katakana
    (0x16FE0, 0x16FFF),  # ideographic symbols
    (0x1B000, 0x1B16F),  # Kana supplement and extensions
    (0x20000, 0x323AF),  # CJK extensions B and later
]

# Default_Ignorable_Code_Point (DerivedCoreProperties.txt, Unicode 14.0; `unicodedata` does not
# expose it): soft hyphen, combining grapheme joiner, Hangul fillers, zero-width space and
# joiners, bidi and other format controls, variation selectors, tags, and reserved ranges.
DEFAULT_IGNORABLE = [
    (0x00AD, 0x00AD), (0x034F, 0x034F), (0x061C, 0x061C), (0x115F, 0x1160),
    (0x17B4, 0x17B5), (0x180B, 0x180F), (0x200B, 0x200F), (0x202A, 0x202E),
    (0x2060, 0x206F), (0x3164, 0x3164), (0xFE00, 0xFE0F), (0xFEFF, 0xFEFF),
    (0xFFA0, 0xFFA0), (0xFFF0, 0xFFF8), (0x1BCA0, 0x1BCA3), (0x1D173, 0x1D17A),
    (0xE0000, 0xE0FFF),
]  # fmt: skip

# Confusable letters: Cyrillic and Greek letters drawn like a Latin letter in common fonts, and
# that Latin letter (in the same case; the fold lowercases after). A token is folded only when
# every code point in it is Latin, a mark, a number or one of these (docs/kernels.md, "Tokens").
CONFUSABLE = {
    # Cyrillic capitals and small letters
    0x0405: "S", 0x0406: "I", 0x0408: "J", 0x0410: "A", 0x0412: "B", 0x0415: "E", 0x041A: "K",
    0x041C: "M", 0x041D: "H", 0x041E: "O", 0x0420: "P", 0x0421: "C", 0x0422: "T", 0x0425: "X",
    0x0474: "V", 0x04AE: "Y", 0x04C0: "I", 0x051A: "Q", 0x051C: "W",
    0x0430: "a", 0x0435: "e", 0x043E: "o", 0x0440: "p", 0x0441: "c", 0x0443: "y", 0x0445: "x",
    0x0455: "s", 0x0456: "i", 0x0458: "j", 0x0475: "v", 0x04AF: "y", 0x04BB: "h", 0x04CF: "l",
    0x0501: "d", 0x051B: "q", 0x051D: "w",
    # Greek capitals and small letters
    0x037F: "J", 0x0391: "A", 0x0392: "B", 0x0395: "E", 0x0396: "Z", 0x0397: "H", 0x0399: "I",
    0x039A: "K", 0x039C: "M", 0x039D: "N", 0x039F: "O", 0x03A1: "P", 0x03A4: "T", 0x03A5: "Y",
    0x03A7: "X", 0x03F9: "C",
    0x03B1: "a", 0x03B3: "y", 0x03B9: "i", 0x03BA: "k", 0x03BD: "v", 0x03BF: "o", 0x03C1: "p",
    0x03C5: "u", 0x03C7: "x", 0x03F2: "c", 0x03F3: "j",
}  # fmt: skip

WORD, DIGIT, UNSPACED = 1, 2, 3
# The ``re``/``str`` class bits: ``\\w`` (isalnum or "_"), ``\\s`` (isspace, also what
# ``str.split()`` splits on), ``\\d`` (isdecimal) and ``str.isdigit``.
RE_WORD, RE_SPACE, RE_DECIMAL, RE_DIGIT = 1, 2, 4, 8
# Hangul syllables compose and decompose by arithmetic (both runtimes implement it).
HANGUL_V = (0x1161, 0x1175)
HANGUL_T = (0x11A8, 0x11C2)
HANGUL_SYLLABLES = (0xAC00, 0xD7A3)


def scalars() -> Iterable[int]:
    return (cp for cp in range(0x110000) if not 0xD800 <= cp <= 0xDFFF)


def classify(cp: int) -> int:
    category = unicodedata.category(chr(cp))
    if category[0] not in "LMN":
        return 0
    if any(lo <= cp <= hi for lo, hi in UNSPACED_BLOCKS):
        return UNSPACED
    return DIGIT if category == "Nd" else WORD


def ranges() -> list[tuple[int, int, int]]:
    out: list[tuple[int, int, int]] = []
    for cp in range(0x110000):
        cls = classify(cp)
        if cls == 0:
            continue
        if out and out[-1][2] == cls and out[-1][1] == cp - 1:
            out[-1] = (out[-1][0], cp, cls)
        else:
            out.append((cp, cp, cls))
    return out


def spans(pred: Callable[[int], bool]) -> list[tuple[int, int]]:
    """The (first, last) ranges of scalar values where ``pred`` holds."""
    out: list[tuple[int, int]] = []
    for cp in scalars():
        if pred(cp):
            if out and out[-1][1] == cp - 1:
                out[-1] = (out[-1][0], cp)
            else:
                out.append((cp, cp))
    return out


def lowercase() -> list[tuple[int, int]]:
    pairs = []
    for cp in scalars():
        lower = chr(cp).lower()
        if len(lower) == 1 and ord(lower) != cp:
            pairs.append((cp, ord(lower)))
    return pairs


def is_ignorable(cp: int) -> bool:
    return any(lo <= cp <= hi for lo, hi in DEFAULT_IGNORABLE)


def decompositions() -> tuple[list[tuple[int, int, int]], list[int]]:
    """Full NFKD of every code point it changes (Hangul syllables excepted), ignorables dropped."""
    index, data = [], []
    for cp in scalars():
        if HANGUL_SYLLABLES[0] <= cp <= HANGUL_SYLLABLES[1] or is_ignorable(cp):
            continue
        nfkd = [ord(c) for c in unicodedata.normalize("NFKD", chr(cp))]
        if nfkd != [cp]:
            kept = [c for c in nfkd if not is_ignorable(c)]
            index.append((cp, len(data), len(kept)))
            data.extend(kept)
    return index, data


def compositions() -> list[tuple[int, int, int]]:
    """(first, second, composite) for every primary composite (Hangul syllables excepted)."""
    out = []
    for cp in scalars():
        mapping = unicodedata.decomposition(chr(cp))
        if not mapping or mapping.startswith("<"):
            continue
        parts = [int(x, 16) for x in mapping.split()]
        if len(parts) == 2 and unicodedata.normalize("NFC", chr(cp)) == chr(cp):
            out.append((parts[0], parts[1], cp))
    return sorted(out)


def combining_classes() -> list[tuple[int, int, int]]:
    out: list[tuple[int, int, int]] = []
    for cp in scalars():
        ccc = unicodedata.combining(chr(cp))
        if not ccc:
            continue
        if out and out[-1][1] == cp - 1 and out[-1][2] == ccc:
            out[-1] = (out[-1][0], cp, ccc)
        else:
            out.append((cp, cp, ccc))
    return out


def unstable(composes_second: set[int]) -> Callable[[int], bool]:
    """Code points that can change a text under the normaliser (everything else leaves it be)."""

    def pred(cp: int) -> bool:
        c = chr(cp)
        return (
            is_ignorable(cp)
            or unicodedata.combining(c) != 0
            or unicodedata.normalize("NFKC", c) != c
            or cp in composes_second
            or HANGUL_V[0] <= cp <= HANGUL_V[1]
            or HANGUL_T[0] <= cp <= HANGUL_T[1]
        )

    return pred


def fold_ok(cp: int) -> bool:
    """Code points a folded token may hold: Latin letters, marks, numbers, confusables."""
    c = chr(cp)
    category = unicodedata.category(c)
    if cp in CONFUSABLE or category[0] in "MN":
        return True
    return category[0] == "L" and unicodedata.name(c, "").startswith("LATIN ")


def re_flags(cp: int) -> int:
    """The ``re``/``str`` class bits of one code point, read from ``str`` methods."""
    c = chr(cp)
    return ((RE_WORD if c.isalnum() or c == "_" else 0) | (RE_SPACE if c.isspace() else 0)
            | (RE_DECIMAL if c.isdecimal() else 0) | (RE_DIGIT if c.isdigit() else 0))


def re_classes() -> list[tuple[int, int, int]]:
    """``(first, last, bits)`` for every run of code points with the same non-zero bits."""
    out: list[tuple[int, int, int]] = []
    for cp in range(0x110000):
        f = re_flags(cp)
        if out and out[-1][2] == f and out[-1][1] == cp - 1:
            out[-1] = (out[-1][0], cp, f)
        elif f:
            out.append((cp, cp, f))
    return out


def re_fold() -> list[tuple[int, int]]:
    """``(code point, lowercase ASCII letter)``: the non-ASCII code points ``re.IGNORECASE``
    matches with an ASCII letter (U+212A KELVIN SIGN with "k", ...)."""
    any_letter = re.compile("[a-z]", re.IGNORECASE)
    out = []
    for cp in range(0x80, 0x110000):
        c = chr(cp)
        if any_letter.fullmatch(c):
            letter = next(x for x in string.ascii_lowercase if re.fullmatch(x, c, re.IGNORECASE))
            out.append((cp, ord(letter)))
    return out


def render_classes(version: str, classes: list[tuple[int, int, int]],
                   fold: list[tuple[int, int]]) -> str:
    """The Rust source of the ``re``/``str`` class tables (``rust/src/pychars.rs``)."""
    arms = [f"        0x{a:x} => 0x{b:x}," for a, b in fold]
    lines = [
        f"//! @generated by tools/gen_unicode_data.py from Unicode {version}: do not edit.",
        "//!",
        "//! The `re`/`str` character classes both backends read (`\\w`, `\\s`, `\\d`,",
        "//! `str.isdigit`, and `re.IGNORECASE`'s equivalences with ASCII letters), at the pinned",
        "//! Unicode version of `crate::unicode_data::UNICODE_VERSION`.",
        "",
        f"pub const WORD: u8 = {RE_WORD};",
        f"pub const SPACE: u8 = {RE_SPACE};",
        f"pub const DECIMAL: u8 = {RE_DECIMAL};",
        f"pub const DIGIT: u8 = {RE_DIGIT};",
        "",
        "/// (first, last, flags) code point ranges, sorted; every other code point has no flag.",
        "#[rustfmt::skip]",
        "pub static RANGES: &[(u32, u32, u8)] = &[",
        *(f"    (0x{a:x}, 0x{b:x}, {f})," for a, b, f in classes),
        "];",
        "",
        "/// The lowercase ASCII letter `re.IGNORECASE` equates a non-ASCII code point with, or",
        "/// the code point itself.",
        "#[rustfmt::skip]",
        "pub const fn fold_non_ascii(cp: u32) -> u32 {",
        "    match cp {",
        *arms,
        "        _ => cp,",
        "    }",
        "}",
        "",
    ]
    return "\n".join(lines)


def packed(items: Sequence[str], per_line: int, indent: str = "    ") -> list[str]:
    return [
        indent + " ".join(items[i : i + per_line]).rstrip()
        for i in range(0, len(items), per_line)
    ]


def main(check: bool) -> int:
    version = unicodedata.unidata_version
    if version != PINNED:
        print(f"this Python's Unicode is {version}, the tables are pinned to {PINNED}: run the "
              f"generator with a Python whose unicodedata.unidata_version is {PINNED} (CPython "
              "3.11), or move the pin on purpose (see the module docs)", file=sys.stderr)
        return 2
    classes, fold_letters = re_classes(), re_fold()
    table = ranges()
    lower = lowercase()
    decomp, decomp_data = decompositions()
    compose = compositions()
    ccc = combining_classes()
    unsafe = spans(unstable({b for _, b, _ in compose}))
    confusable = sorted((cp, ord(latin.lower())) for cp, latin in CONFUSABLE.items())
    assert all(cp < 0x800 for cp, _ in confusable), "the Rust dense table covers < U+0800 only"
    assert max(n for _, _, n in decomp) < 32
    fold = spans(fold_ok)
    tables: list[tuple[str, str, str, str, list[str], int]] = [
        # name, Python type, Rust type, comment, items, items per line
        ("RANGES", "tuple[tuple[int, int, int], ...]", "&[(u32, u32, u8)]",
         "(first, last, class) code point ranges, sorted; everything else separates tokens.",
         [f"({lo:#x}, {hi:#x}, {cls})," for lo, hi, cls in table], 1),
        ("LOWER", "tuple[tuple[int, int], ...]", "&[(u32, u32)]",
         "(code point, lowercase code point), sorted: the simple one-to-one mappings.",
         [f"({a:#x}, {b:#x})," for a, b in lower], 1),
        ("IGNORABLE", "tuple[tuple[int, int], ...]", "&[(u32, u32)]",
         "(first, last) ranges of default-ignorable code points, removed before NFKC.",
         [f"({a:#x}, {b:#x})," for a, b in DEFAULT_IGNORABLE], 4),
        ("UNSTABLE", "tuple[tuple[int, int], ...]", "&[(u32, u32)]",
         "(first, last) ranges of code points that may change a text under the normaliser:\n"
         "ignorables, nonzero combining class, NFKC-changed, second half of a composition.",
         [f"({a:#x}, {b:#x})," for a, b in unsafe], 4),
        ("CCC", "tuple[tuple[int, int, int], ...]", "&[(u32, u32, u8)]",
         "(first, last, canonical combining class) ranges, sorted; 0 elsewhere.",
         [f"({a:#x}, {b:#x}, {c})," for a, b, c in ccc], 4),
        ("DECOMP", "tuple[tuple[int, int, int], ...]", "&[(u32, u16, u8)]",
         "(code point, start, length) of its full NFKD in DECOMP_DATA (ignorables dropped),\n"
         "sorted; Hangul syllables decompose by arithmetic.",
         [f"({a:#x}, {b}, {c})," for a, b, c in decomp], 5),
        ("DECOMP_DATA", "tuple[int, ...]", "&[u32]", "The decompositions, back to back.",
         [f"{c:#x}," for c in decomp_data], 10),
        ("COMPOSE", "tuple[tuple[int, int, int], ...]", "&[(u32, u32, u32)]",
         "(first, second, primary composite), sorted; Hangul syllables compose by arithmetic.",
         [f"({a:#x}, {b:#x}, {c:#x})," for a, b, c in compose], 3),
        ("CONFUSABLE", "tuple[tuple[int, int], ...]", "&[(u32, u32)]",
         "(Cyrillic or Greek letter, lowercase Latin letter drawn alike), sorted.",
         [f"({a:#x}, {b:#x})," for a, b in confusable], 5),
        ("FOLD_OK", "tuple[tuple[int, int], ...]", "&[(u32, u32)]",
         "(first, last) ranges a folded token may hold: Latin, marks, numbers, confusables.",
         [f"({a:#x}, {b:#x})," for a, b in fold], 4),
    ]  # fmt: skip
    # Python: each table is one string of hex fields ("," inside an entry, " " between
    # entries), parsed once at import: compiling a literal of ~25,000 ints took ~0.1 s in every
    # process that has no bytecode cache.
    py_tables: list[tuple[str, str, Sequence[Sequence[int]]]] = [
        ("RANGES", "(first, last, class) code point ranges, sorted; the rest separates tokens.",
         table),
        ("LOWER", "(code point, lowercase code point), sorted: the one-to-one mappings.", lower),
        ("IGNORABLE", "(first, last) ranges of default-ignorable code points, removed first.",
         DEFAULT_IGNORABLE),
        ("UNSTABLE", "(first, last) ranges of code points that may change a text under the\n"
         "normaliser: ignorables, nonzero combining class, NFKC-changed, second of a pair.",
         unsafe),
        ("CCC", "(first, last, canonical combining class) ranges, sorted; 0 elsewhere.", ccc),
        ("DECOMP", "(code point, *its full NFKD), sorted, ignorables dropped; Hangul syllables\n"
         "decompose by arithmetic.",
         [(cp, *decomp_data[start : start + n]) for cp, start, n in decomp]),
        ("COMPOSE", "(first, second, primary composite), sorted; Hangul by arithmetic.", compose),
        ("CONFUSABLE", "(Cyrillic or Greek letter, lowercase Latin letter drawn alike), sorted.",
         confusable),
        ("FOLD_OK", "(first, last) ranges a folded token may hold: Latin, marks, numbers,\n"
         "confusables.", fold),
        ("RE_CLASSES", "(first, last, re/str class bits) ranges, sorted; no bit elsewhere.",
         classes),
        ("RE_FOLD", "(non-ASCII code point, lowercase ASCII letter re.IGNORECASE equates it with).",
         fold_letters),
    ]  # fmt: skip
    py = [
        f'"""Generated by tools/gen_unicode_data.py from Unicode {version}: do not edit."""',
        "",
        f'UNICODE_VERSION = "{version}"',
        "WORD, DIGIT, UNSPACED = 1, 2, 3",
        "RE_WORD, RE_SPACE, RE_DECIMAL, RE_DIGIT = "
        f"{RE_WORD}, {RE_SPACE}, {RE_DECIMAL}, {RE_DIGIT}",
        "",
        "",
        "def _rows(table: str) -> tuple[tuple[int, ...], ...]:",
        '    return tuple(tuple(int(x, 16) for x in e.split(",")) for e in table.split())',
        "",
    ]
    for name, comment, rows in py_tables:
        encoded = " ".join(",".join(f"{x:x}" for x in row) for row in rows)
        chunks = textwrap.wrap(encoded, 90, break_on_hyphens=False)
        py += ["", *(f"# {c}" for c in comment.split("\n"))]
        py += [f"{name}: tuple[tuple[int, ...], ...] = _rows("]
        py += [*(f'    "{c} "' for c in chunks), ")"]
    rs = [
        f"//! @generated by tools/gen_unicode_data.py from Unicode {version}: do not edit.",
        "",
        f'pub const UNICODE_VERSION: &str = "{version}";',
        "pub const WORD: u8 = 1;",
        "pub const DIGIT: u8 = 2;",
        "pub const UNSPACED: u8 = 3;",
    ]
    for name, _, rs_type, comment, items, per_line in tables:
        rs += ["", *(f"/// {c}" for c in comment.split("\n")), "#[rustfmt::skip]"]
        rs += [f"pub static {name}: {rs_type} = &["]
        rs += [*packed(items, per_line), "];"]
    outputs = {
        PY_OUT: "\n".join([*py, ""]),
        RS_OUT: "\n".join([*rs, ""]),
        RS_CLASSES_OUT: render_classes(version, classes, fold_letters),
    }
    if check:
        stale = [str(p.relative_to(ROOT)) for p, text in outputs.items()
                 if not p.exists() or p.read_text(encoding="utf-8") != text]
        if stale:
            print(f"not what the generator makes: {', '.join(stale)}", file=sys.stderr)
        return 1 if stale else 0
    for path, text in outputs.items():
        path.write_text(text, encoding="utf-8")
    summary = (
        f"Unicode {version}: {len(table)} ranges, {len(lower)} lowercase mappings, "
        f"{len(decomp)} decompositions ({len(decomp_data)} code points), {len(compose)} "
        f"compositions, {len(ccc)} combining-class ranges, {len(unsafe)} unstable ranges, "
        f"{len(confusable)} confusables, {len(fold)} fold ranges, {len(classes)} re class "
        f"ranges, {len(fold_letters)} re.IGNORECASE letters"
    )
    print(summary, file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main("--check" in sys.argv[1:]))
