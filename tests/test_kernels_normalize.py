"""Unicode normalisation and the confusable fold: evasions of a copy read as the copy.

Both backends tokenise through the same committed tables (docs/kernels.md, "Tokens"); the pure
normaliser is checked against the runtime's own NFKC when the runtime has the tables' Unicode
version, and the native one against the pure one by the golden vectors and differential tests.
"""

from __future__ import annotations

import random
import unicodedata
from types import ModuleType

import pytest

from evasions import EVASIONS, PLAIN
from whileai._pure._unicode_data import CONFUSABLE, IGNORABLE, UNICODE_VERSION
from whileai._pure.normalize import normalize


def _ignorable(text: str) -> str:
    return "".join(c for c in text if not any(lo <= ord(c) <= hi for lo, hi in IGNORABLE))


@pytest.mark.parametrize(("name", "text"), EVASIONS)
def test_each_evasion_tokenises_like_the_plain_text(
    backend: ModuleType, name: str, text: str
) -> None:
    assert text != PLAIN
    assert backend.tokenize(text) == backend.tokenize(PLAIN), name


def test_accents_compose_whatever_the_form(backend: ModuleType) -> None:
    nfd = unicodedata.normalize("NFD", "café naïve Ñandú résumé")
    assert nfd != "café naïve Ñandú résumé"
    assert backend.tokenize(nfd) == ["café", "naïve", "ñandú", "résumé"]
    # Marks out of canonical order still compose to the same letter.
    assert backend.tokenize("a\u0323\u0302") == backend.tokenize("a\u0302\u0323") == ["\u1ead"]
    assert backend.tokenize("\u1100\u1161\u11a8") == ["\uac01"]


def test_the_fold_leaves_real_cyrillic_and_greek_words_alone(backend: ModuleType) -> None:
    assert backend.tokenize("Привет мир, κόσμος ΟΔΟΣ") == ["привет", "мир", "κόσμος", "οδοσ"]
    # Case decides the lookalike: Greek capital Nu is "N", small nu is "v".
    assert backend.tokenize("\u039dote \u03bdote") == ["note", "vote"]
    # Tokens spelled only in lookalikes fold too (the same on both sides of a comparison).
    assert backend.tokenize("\u0441\u043e\u0440 \u03bf") == ["cop", "o"]


def test_hash_embedder_sees_the_same_words(backend: ModuleType) -> None:
    texts = [PLAIN, *(text for _, text in EVASIONS)]
    counts = backend.embed_counts(texts, 64).tolist()
    for k in range(1, len(texts)):
        assert counts[k * 64 : (k + 1) * 64] == counts[:64], EVASIONS[k - 1][0]


@pytest.mark.skipif(
    unicodedata.unidata_version != UNICODE_VERSION,
    reason="the runtime's unicodedata has another Unicode version than the tables",
)
def test_pure_normaliser_is_nfkc_without_ignorables() -> None:
    rng = random.Random(7)
    tricky = [0x61, 0x65, 0x301, 0x323, 0x302, 0x1100, 0x1161, 0x11A8, 0xAC00, 0x200B, 0xAD,
              0xB47, 0xB3E, 0x3099, 0x304B, 0xFF41, 0xFB01, 0x2460, 0xFDFA, 0x0F73, 0x0344]
    for _ in range(3000):
        chars = [
            chr(rng.choice(tricky)) if rng.random() < 0.7 else chr(rng.randrange(0x30000))
            for _ in range(rng.randint(0, 10))
        ]
        text = "".join(c for c in chars if not 0xD800 <= ord(c) <= 0xDFFF)
        assert normalize(text) == unicodedata.normalize("NFKC", _ignorable(text)), repr(text)
    for cp in range(0x110000):
        if 0xD800 <= cp <= 0xDFFF:
            continue
        text = chr(cp) + "\u0301"
        assert normalize(text) == unicodedata.normalize("NFKC", _ignorable(text)), hex(cp)


def test_confusable_table_maps_to_lowercase_latin() -> None:
    assert len(CONFUSABLE) >= 40
    for cp, latin in CONFUSABLE:
        assert unicodedata.name(chr(cp)).startswith(("CYRILLIC", "GREEK")), hex(cp)
        assert "a" <= chr(latin) <= "z"
