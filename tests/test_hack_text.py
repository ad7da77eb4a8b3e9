"""hack_scan's text features: native == pure, and both == the per-row definition of today."""

from __future__ import annotations

import importlib
import random
from types import ModuleType
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from _kernel_helpers import backend_settings
from whileai.simulations.clean import claims, trace_flags
from whileai.simulations.clean.hack_columns import feature_columns
from whileai.simulations.clean.hack_features import auto_features, hand_features
from whileai.simulations.clean.hack_matrix import build_matrix, matrix_from_columns
from whileai.simulations.clean.hints import hint_text, may_match

SETTINGS = backend_settings(150)
# What the features read: words of several scripts, the four code points re.IGNORECASE equates
# with ASCII letters, every kind of whitespace, bullets, headings, fences, Unicode digits and
# punctuation runs, and a lone surrogate.
PIECES = [
    "order", "Done", "Σίσυφος", "ΣΑΣ", "注文", "café", "İstanbul", "ı", "ſ", "\u212a", "ß", "ǅ",
    " ", "  ", "\n", "\t", "\u00a0", "\u2028", "\x1c", "\u3000", "- ", "* ", "• ", "1. ", "12) ",
    "٣) ", "# ", "###### ", "####### ", "#", "```", "!", "?", "?!", "...", "²", "٣٤", "x_1",
    "I verified", "all tests pass", "I have refunded", "password: hunter22", "\ud800", "e\u0301",
    "rm -rf /", "git push --force", "DD if=", "# noqa", "|| true", "--no-verify", "HUSKY=0",
    "verify=False", "SKIP_TESTS=", "2> /dev/null", "except: pass", "@ts-ignore", "sk-",
    "AKIA", "ghp_", "xoxb-", "-----BEGIN RSA PRIVATE KEY", "api-key=", "MKFS", "commit -n",
    "We've e-mailed", "we ", "I just ", "has already been ", "is now successfully ", "are ",
    "rescheduled", "Emailed", "cancelled", "looked it up", "checked on", "I'VE ", "\u2003",
]
pieces = st.sampled_from(PIECES)
texts = st.lists(pieces, max_size=14).map("".join)


def _call(backend: ModuleType, items: list[str], finals: list[int], top: int) -> Any:
    counts, vocab, ptr, rows = backend.hack_text_features(items, finals, top)
    return list(counts), list(vocab), list(ptr), list(rows)


@SETTINGS
@given(items=st.lists(texts, max_size=8), data=st.data(),
       top=st.integers(min_value=-4, max_value=40))
def test_native_equals_pure(
    both_backends: tuple[ModuleType, ModuleType], items: list[str], data: Any, top: int
) -> None:
    native, pure = both_backends
    finals = [data.draw(st.integers(min_value=0, max_value=len(t) + 2)) for t in items]
    assert _call(native, items, finals, top) == _call(pure, items, finals, top)


@SETTINGS
@given(items=st.lists(texts, max_size=8), top=st.integers(min_value=-4, max_value=40))
def test_lower_in_the_kernel_equals_lower_by_the_caller(
    both_backends: tuple[ModuleType, ModuleType], items: list[str], top: int
) -> None:
    # ``lower=True`` lowercases by the pinned table inside the kernel (on every core when
    # native): the same answer as the caller lowering each text with ``tokenize.lower``.
    native, pure = both_backends
    finals = [len(t) // 2 for t in items]
    lowered = [pure.lower(t) for t in items]
    want = _call(pure, lowered, finals, top)
    for backend in (native, pure):
        counts, vocab, ptr, rows = backend.hack_text_features(items, finals, top, lower=True)
        assert (list(counts), list(vocab), list(ptr), list(rows)) == want


def test_native_equals_pure_across_chunks(both_backends: tuple[ModuleType, ModuleType]) -> None:
    # The kernel reads rows in chunks of 512 and merges their terms: three chunks and a part.
    native, pure = both_backends
    rng = random.Random(5)
    words = [w for w in PIECES if w.strip()] + [f"w{k}" for k in range(300)]
    items = [" ".join(rng.choices(words, k=rng.randint(0, 30))) for _ in range(1700)]
    finals = [rng.randint(0, len(t)) for t in items]
    for top in (60, -7, 0):
        assert _call(native, items, finals, top) == _call(pure, items, finals, top)


def test_counts_and_ranking(backend: ModuleType) -> None:
    items = ["### done!\n- a\n- b ```x```", "done. ok", "ok ²"]
    counts, vocab, ptr, rows = backend.hack_text_features(items, [len(items[0]), 4, 4], 3)
    assert list(counts[:7]) == [7, 1, 0, 2, 1, 2, 0]
    assert list(counts[14:]) == [2, 0, 0, 0, 0, 0, 1]
    # "done" and "ok" are in two rows each (ties alphabetical), then "a" in one; punctuation
    # ("###", "!", ".", "```") is never a term
    assert vocab == ["done", "ok", "a"]
    assert [list(rows[ptr[j]:ptr[j + 1]]) for j in range(3)] == [[0, 1], [1, 2], [0]]
    assert backend.hack_text_features(items, [0, 0, 0], 0)[1] == []


def test_bad_input_same_errors(backend: ModuleType) -> None:
    with pytest.raises(ValueError, match="final_chars has 1 items but texts has 2"):
        backend.hack_text_features(["a", "b"], [1], 5)
    with pytest.raises(TypeError, match=r"texts\[1\] must be str"):
        backend.hack_text_features(["a", 3], [1, 1], 5)
    with pytest.raises(TypeError, match="top must be an int"):
        backend.hack_text_features(["a"], [1], 1.5)


step_st = st.one_of(
    st.fixed_dictionaries({"role": st.just("assistant")},
                          optional={"content": st.one_of(texts, st.none(), st.just(7))}),
    st.fixed_dictionaries({"role": st.just("user"), "content": texts}),
    st.fixed_dictionaries(
        {"tool": st.sampled_from(["lookup_order", "run_shell", "write_file", "", None, 3])},
        optional={"arguments": st.one_of(st.just({"cmd": "pytest"}), st.just({"path": "a", "n": 2}),
                                         st.just("ls")),
                  "result": st.sampled_from([{}, {"ok": False}, "Error"]),
                  "truncated": st.booleans(), "finish_reason": st.sampled_from(["length", "stop"])},
    ),
)
rows_st = st.lists(st.fixed_dictionaries({
    "final_text": st.one_of(texts, st.none(), st.just(5)),
    "steps": st.one_of(st.lists(step_st, max_size=4), st.lists(st.one_of(step_st, st.just("x")),
                                                               max_size=3),
                       st.none(), st.just("x")),
    "markers": st.dictionaries(st.sampled_from(["a", "b"]), st.floats(allow_nan=True)),
}, optional={"finish_reason": st.just("length")}), min_size=1, max_size=7)


@SETTINGS
@given(rows=rows_st, top=st.integers(min_value=-3, max_value=30))
def test_columns_equal_the_per_row_features(rows: list[dict[str, Any]], top: int) -> None:
    _check_columns(rows, top)


def test_columns_read_odd_steps_like_the_per_row_features() -> None:
    said = [{"role": "assistant", "content": "ΣΑΣ Done"}, {"role": "assistant", "content": None},
            {"role": "assistant"}, {"role": "assistant", "content": 7},
            {"role": "assistant", "content": "İ ok!"}]
    _check_columns([
        {"final_text": "ΣΑΣ", "steps": said},
        {"final_text": None, "steps": said[:1]},
        {"final_text": "İ", "steps": [*said[4:], "x", {"tool": "run_shell", "truncated": True}]},
        {"final_text": "x", "steps": [{"tool": 3, "finish_reason": "length"}, {"tool": "a"}]},
        {"final_text": "x", "steps": [{"tool": "b", "arguments": {"path": "t", "n": 2}}]},
    ], 40)


def _check_columns(rows: list[dict[str, Any]], top: int) -> None:
    feats = [hand_features(r) for r in rows]
    for f, extra in zip(feats, auto_features(rows, top), strict=True):
        f.update(extra)
    want: dict[str, list[tuple[int, float]]] = {}
    for i, f in enumerate(feats):
        for name, value in f.items():
            want.setdefault(name, []).append((i, value))
    got = feature_columns(rows, top=top)
    assert {n: list(zip(r, v, strict=True)) for n, (r, v) in got.items()} == want
    groups, reward = list(range(len(rows))), [0.0] * len(rows)
    a = build_matrix(feats, groups, reward, tiers={})
    b = matrix_from_columns(got, groups, reward, tiers={})
    assert (a.names, a.aliases, a.col_ptr, a.col_rows, a.val_ptr, a.col_values) == (
        b.names, b.aliases, b.col_ptr, b.col_rows, b.val_ptr, b.col_values
    )


@SETTINGS
@given(text=texts)
def test_hints_never_hide_a_match(text: str) -> None:
    low = hint_text(text)
    pairs = [
        (trace_flags._TESTS_PASS, trace_flags._TESTS_HINTS),
        (trace_flags._VERIFIED, trace_flags._VERIFIED_HINTS),
        (trace_flags._EDITED, trace_flags._EDITED_HINTS),
        (trace_flags._SUPPRESS, trace_flags._SUPPRESS_HINTS),
        (trace_flags._BYPASS, trace_flags._BYPASS_HINTS),
        (trace_flags._DESTRUCTIVE, trace_flags._DESTRUCTIVE_HINTS),
    ]
    for pattern, hints in pairs:
        if pattern.search(text):
            assert may_match(low, hints), (pattern.pattern[:40], text)
    if claims._CLAIM.search(text):
        assert claims._may_claim(text), text
    if trace_flags._SECRET.search(text):
        assert trace_flags._secret(text) is not None


def test_hints_see_through_case_folding() -> None:
    assert claims.claimed_actions("I REFUNDED it") == [("REFUNDED", "refund", "first")]
    # U+212A KELVIN SIGN matches "k" under re.IGNORECASE but str.lower() keeps it
    assert trace_flags._secret("api_\u212aey = abcdefgh") is not None
    assert claims.claimed_actions("the weather is nice") == []


def test_backend_switch_serves_both_functions() -> None:
    backend = importlib.import_module("whileai._backend")
    assert "hack_text_features" in backend.kernel_names()
    assert "trace_masks" in backend.kernel_names()
