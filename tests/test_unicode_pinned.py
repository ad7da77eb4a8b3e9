"""One Unicode version on every Python: both backends read committed tables, never the runtime's.

The tables (``tools/gen_unicode_data.py``, docs/kernels.md "One Unicode version") are checked
against code points whose class moved between Unicode 13.0 (Python 3.10) and 15.1 (Python
3.13): both backends give the pinned answer whatever Python runs them. Where other Pythons are
installed, the pure backend's answers on a fixed corpus are compared across them.
"""

from __future__ import annotations

import glob
import json
import os
import re
import shutil
import subprocess
import sys
import unicodedata
from array import array
from pathlib import Path
from types import ModuleType

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from whileai._pure import _unicode_data as tables
from whileai._pure.charclass import (
    STAND_INS,
    class_regex,
    class_text,
    count_digits,
    count_words,
    pinned_regex,
)
from whileai._pure.hack_text import text_counts, words
from whileai._pure.tokenize import lower
from whileai.simulations.clean.trace_batch import trace_patterns

ROOT = Path(__file__).resolve().parents[1]
NEVER = "\x01\x01\x01"
# (code point, \w, \d and str.isdigit, a token, its lowercase) at the pinned Unicode 14.0, and
# the version that moved it. Python 3.10 (Unicode 13.0) says no class for the 14.0 ones; 3.12
# and 3.13 (15.0, 15.1) say word (or digit) for the later ones.
MOVED = [
    (0x0870, True, False, True, 0x0870),  # ARABIC LETTER ALEF WITH ATTACHED FATHA: 14.0
    (0x16AC0, True, True, True, 0x16AC0),  # TANGSA DIGIT ZERO: 14.0
    (0x2C2F, True, False, True, 0x2C5F),  # GLAGOLITIC CAPITAL LETTER CAUDATE CHRIVI: 14.0
    (0xA7C0, True, False, True, 0xA7C1),  # LATIN CAPITAL LETTER OLD POLISH O: 14.0
    (0x10570, True, False, True, 0x10597),  # VITHKUQI CAPITAL LETTER A: 14.0
    (0x0CF3, False, False, False, 0x0CF3),  # KANNADA SIGN COMBINING ANUSVARA ABOVE RIGHT: 15.0
    (0x11F04, False, False, False, 0x11F04),  # KAWI LETTER A: 15.0
    (0x11F50, False, False, False, 0x11F50),  # KAWI DIGIT ZERO: 15.0
    (0x1E4D0, False, False, False, 0x1E4D0),  # NAG MUNDARI LETTER O: 15.0
    (0x1E4F0, False, False, False, 0x1E4F0),  # NAG MUNDARI DIGIT ZERO: 15.0
    (0x31350, False, False, False, 0x31350),  # CJK UNIFIED IDEOGRAPH-31350 (Extension H): 15.0
    (0x2EBF0, False, False, False, 0x2EBF0),  # CJK UNIFIED IDEOGRAPH-2EBF0 (Extension I): 15.1
]


def _search(backend: ModuleType, pattern: str, items: list[str]) -> list[bool]:
    """Whether ``pattern`` is found in each text, through the trace kernel's first rule."""
    n = len(items)
    masks = backend.trace_masks([pattern] + [NEVER] * 12, ["lookup"], items, items,
                                array("q", [0] * (n + 1)), array("q"), array("q"), [], [])
    return [bool(m & 1) for m in masks]


def test_the_pin_is_one_version_everywhere(backend: ModuleType) -> None:
    assert tables.UNICODE_VERSION == backend.UNICODE_VERSION == "14.0.0"
    rust = (ROOT / "rust/src/unicode_data.rs").read_text(encoding="utf-8")
    assert 'pub const UNICODE_VERSION: &str = "14.0.0";' in rust


@pytest.mark.parametrize(("cp", "word", "digit", "token", "low"), MOVED,
                         ids=[f"U+{m[0]:04X}" for m in MOVED])
def test_code_points_that_moved_get_the_pinned_answer(
    backend: ModuleType, cp: int, word: bool, digit: bool, token: bool, low: int
) -> None:
    ch = chr(cp)
    assert lower(ch) == chr(low)
    assert backend.tokenize(ch) == ([chr(low)] if token else [])
    # The trace patterns' classes (case-insensitive, as the flags run them).
    assert _search(backend, r"^a\wb", [f"a{ch}b"]) == [word]
    assert _search(backend, r"^\d", [ch]) == [digit]
    assert _search(backend, r"^\W", [ch]) == [not word]
    assert _search(backend, r"x\b", [f"x{ch}"]) == [not word]
    # The hack-scan text features: a word, or a separator between two words; a digit count.
    text = lower(f"a{ch}b")
    counts, vocab, _, _ = backend.hack_text_features([text, "q"], [len(text), 0], 50)
    assert (text in vocab) == word
    assert ("a b" in vocab) == (not word)
    assert counts[6] == int(digit)


def test_pinned_patterns_read_no_class_of_the_running_re() -> None:
    """Every trace pattern's ``pinned_regex`` rewrite has no escape whose meaning comes from
    ``re``'s own tables (``\\w \\s \\d \\b`` and their negations) and no ``re.IGNORECASE``."""
    uses_tables = re.compile(r"\\[wsdbWSDBAZ]")
    for pattern in trace_patterns():
        pinned = pinned_regex(pattern, re.IGNORECASE)
        assert pinned.flags & (re.IGNORECASE | re.ASCII | re.LOCALE) == 0
        skipped = re.sub(r"\\\\", "", pinned.pattern)  # an escaped backslash is a literal
        assert uses_tables.search(skipped) is None, pattern[:60]


def test_the_stand_ins_mean_their_class_to_this_re() -> None:
    """``class_text``'s alphabet: each stand-in is, to the running ``re`` and ``str``, exactly
    the class it stands for, and has no case; the kept letters fold as the tables say. (On
    every Python that runs this; the digests below compare Pythons.)"""
    for bits, cp in STAND_INS.items():
        ch = chr(cp)
        got = (bool(re.fullmatch(r"\w", ch)) * tables.RE_WORD
               | bool(re.fullmatch(r"\s", ch)) * tables.RE_SPACE
               | bool(re.fullmatch(r"\d", ch)) * tables.RE_DECIMAL | ch.isdigit() * tables.RE_DIGIT)
        assert got == bits, hex(cp)
        assert [x for x in "abcdefghijklmnopqrstuvwxyz" if re.fullmatch(x, ch, re.I)] == []
        assert class_text(ch) == ch
    for cp, letter in tables.RE_FOLD:
        assert class_text(chr(cp)) == chr(cp)
        assert re.fullmatch(chr(letter), chr(cp), re.IGNORECASE), hex(cp)


def test_pinned_regex_refuses_what_it_cannot_pin() -> None:
    for pattern, flags in [("(?i)a", 0), (r"\N{BULLET}", 0), ("é", re.IGNORECASE), ("a", re.X)]:
        with pytest.raises(ValueError, match=r"pattern|pinned_regex takes"):
            pinned_regex(pattern, flags)
    with pytest.raises(ValueError, match="a non-ASCII character cannot match"):
        class_regex("é")


def test_rust_and_python_tables_are_the_same_tables() -> None:
    """``rust/src/pychars.rs`` holds what ``_unicode_data.py`` holds (one generator wrote both)."""
    rust = (ROOT / "rust/src/pychars.rs").read_text(encoding="utf-8")
    ranges = [tuple(int(x, 0) for x in m.groups())
              for m in re.finditer(r"\((0x[0-9a-f]+), (0x[0-9a-f]+), (\d+)\),", rust)]
    folds = [tuple(int(x, 16) for x in m.groups())
             for m in re.finditer(r"0x([0-9a-f]+) => 0x([0-9a-f]+),", rust)]
    assert ranges == [tuple(r) for r in tables.RE_CLASSES]
    assert folds == [tuple(r) for r in tables.RE_FOLD]
    assert [chr(b) for _, b in folds] == ["i", "i", "s", "k"]


@pytest.mark.skipif(unicodedata.unidata_version != tables.UNICODE_VERSION,
                    reason="the generator reads the pinned Unicode of CPython 3.11's database")
def test_the_generator_reproduces_the_committed_tables() -> None:
    gen = ROOT / "tools" / "gen_unicode_data.py"
    if not gen.exists():
        pytest.skip("tools/ is not shipped here")
    done = subprocess.run([sys.executable, str(gen), "--check"], check=False,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


# The pure kernels over a fixed corpus that holds every moved code point, as one digest (the
# trace patterns come from this process: the package's upper layers need `requests`).
_DIGEST = r"""
import hashlib, json, re, sys, unicodedata
from array import array
import whileai._pure as p
cps, patterns = json.loads(sys.argv[1])
texts = [f"a{chr(c)}b {chr(c)}1 I verified {chr(c)} tests pass" for c in cps]
texts += ["ǅ İstanbul ΣΑΣ ſ \u212a ² ٣", "rm -rf / and I have refunded it!"]
low = [p.lower(t) for t in texts]
n = len(texts)
out = [
    [p.tokenize(t) for t in texts],
    low,
    [list(x) for x in p.hack_text_features(low, [len(t) for t in low], 500)],
    list(p.trace_masks(patterns, ["lookup", "refund"], texts, texts,
                       array("q", [0] * (n + 1)), array("q"), array("q"), [], [])),
]
print(unicodedata.unidata_version, hashlib.sha256(json.dumps(out).encode()).hexdigest())
"""


def _other_pythons() -> list[str]:
    """Interpreters of Python 3.10 or later on this machine, other than this one."""
    found = [shutil.which(f"python3.{minor}") for minor in range(10, 15)]
    pyenv = os.environ.get("PYENV_ROOT", os.path.expanduser("~/.pyenv"))
    found += sorted(glob.glob(os.path.join(pyenv, "versions", "3.1[0-9]*", "bin", "python3")))
    out, seen = [], {sys.version_info[:3]}
    for exe in filter(None, found):
        probe = subprocess.run([exe, "-c", "import sys; print(*sys.version_info[:3])"],
                               check=False, capture_output=True, text=True)
        if probe.returncode:
            continue
        version = tuple(int(x) for x in probe.stdout.split())
        if version >= (3, 10) and version not in seen:
            seen.add(version)
            out.append(exe)
    return out


def _digest(python: str) -> tuple[str, str]:
    env = {**os.environ, "WHILEAI_PURE": "1", "PYTHONPATH": str(ROOT / "python")}
    inputs = json.dumps([[m[0] for m in MOVED], trace_patterns()])
    done = subprocess.run([python, "-c", _DIGEST, inputs],
                          check=True, capture_output=True, text=True, env=env)
    version, digest = done.stdout.split()
    return version, digest


def test_other_pythons_give_the_same_answers() -> None:
    others = _other_pythons()
    if not others:
        pytest.skip("no other Python >= 3.10 on this machine")
    _, here = _digest(sys.executable)
    got = {python: _digest(python) for python in others}
    assert {python: digest for python, (_, digest) in got.items()} == dict.fromkeys(others, here)


def test_info_prints_the_pinned_unicode(capsys: pytest.CaptureFixture[str]) -> None:
    from whileai.cli import main

    assert main(["info"]) == 0
    assert f"unicode: {tables.UNICODE_VERSION} (committed tables" in capsys.readouterr().out


_DIGIT_RANGES = [(lo, hi) for lo, hi, bits in tables.RE_CLASSES if bits & tables.RE_DIGIT]
_REFERENCE = {  # the hack-text patterns by the other construction (explicit classes)
    "words": pinned_regex(r"\w+"),
    "bullets": pinned_regex(r"^\s*(?:[-*•]|\d+[.)])\s+", re.MULTILINE),
    "headings": pinned_regex(r"^\s*#{1,6}\s", re.MULTILINE),
    "split": pinned_regex(r"\S+"),
}


@settings(deadline=None, max_examples=300)
@given(text=st.text(st.characters(codec="utf-8")) | st.lists(st.sampled_from(
    ["- ", "1. ", "٣) ", "# ", "\n", "\u3000", "\u2028", "\x1c", "注文", "²", "x_1", "!", "•",
     "\U00031350", "\u0870", "\U00011f50", "İ", "\u212a", " "]), max_size=12).map("".join))
def test_the_class_alphabet_reads_text_as_the_explicit_classes(text: str) -> None:
    assert words(text) == _REFERENCE["words"].findall(text)
    counts = text_counts(text, text)
    assert counts[0] == len(_REFERENCE["split"].findall(text)) == count_words(text)
    assert counts[3] == len(_REFERENCE["bullets"].findall(text))
    assert counts[4] == len(_REFERENCE["headings"].findall(text))
    want = sum(any(lo <= ord(c) <= hi for lo, hi in _DIGIT_RANGES) for c in text)
    assert counts[6] == want == count_digits(text)
