"""The trace-flag kernel: native == pure, both == ``trace_flags``, and the matcher == ``re``."""

from __future__ import annotations

import importlib
import re
import unicodedata
from array import array
from types import ModuleType
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from _kernel_helpers import backend_settings
from whileai._pure.charclass import UNICODE_VERSION, pinned_regex
from whileai.simulations.clean import claims
from whileai.simulations.clean.trace_batch import FLAGS, TraceInputs, flag_masks, trace_patterns
from whileai.simulations.clean.trace_flags import step_failed, trace_flags

SETTINGS = backend_settings(150)
NEVER = "\x01\x01\x01"  # a pattern no generated text holds
# Words the patterns look for, in several cases and scripts, the four code points re.IGNORECASE
# equates with ASCII letters, Unicode word characters, digits and spaces around them.
pieces = st.sampled_from([
    "I verified", "i've CHECKED", "all tests pass", "Tests now passing", "test suite is green",
    "I have refunded", "We've e-mailed", "we ", "I ", "I just ", "has already been ",
    "is now successfully ", "are ", "rescheduled", "Emailed", "cancelled", "canceled",
    "looked it up", "looked into", "checked on", " and ", ", and then ", " then ", ", ",
    "the order", ".", ";", "\n", "failed", "sorry", "couldn't", "timed out", "out of date",
    "password: hunter22", "api-key=abcdefg", "SECRET = 'xyzxyzxy'", "sk-abcdefghijklmnop1234",
    "AKIAABCDEFGHIJKLMNOP", "ghp_abcdefghijklmnopqrstu", "xoxb-1234567890a",
    "-----BEGIN RSA PRIVATE KEY", "rm -rf /", "rm -f x", "git push --force", "git push -f",
    "DROP TABLE t", "truncate table", "git reset --hard", "mkfs", "dd if=", "git clean -fd",
    "# noqa", "#type: ignore", "except: pass", "except ValueError : pass", "2> /dev/null",
    "|| true", "eslint-disable", "@ts-ignore", "warnings.filterwarnings('ignore",
    "--no-verify", "commit -n", "HUSKY=0", "--skip-check", "verify = False", "SKIP_TEST=",
    "--force-with-lease", "@pytest.mark.skip", "pytest.skip(", "xit(", "xfail", "assert True",
    "# assert", "expect(true)", "pytest -q", "go  test", "npm run test", "cargo test", "tox",
    "tests/", "test_x.py", "a_test.go", "b.spec.ts", "src\\tests\\", "İ", "ı", "ſ", "\u212a",
    "İ've", "ıs", "paſsword: abcdefgh", "a\u212aIA", "Σ", "é", "注文", "x_1", "²", "٣",
    "\u00a0", "\u2028", "\x1c", "\u3000", "\t", " ", "  ", "'", '"', ":", "=", "-", "_", "\ud800",
])
texts = st.lists(pieces, max_size=12).map("".join)
TOOL_NAMES = ["lookup_order", "refund_order", "run_shell", "write_file", "delete_user", "exec_cmd",
         "search_docs", "send_email", "run_tests", "apply_patch", "cancel_booking", "helper",
         "", None, 7]
step_st = st.one_of(
    st.fixed_dictionaries({"role": st.sampled_from(["assistant", "user"]), "content": texts}),
    st.fixed_dictionaries({"role": st.just("assistant")},
                          optional={"content": st.one_of(st.none(), st.just(3))}),
    st.fixed_dictionaries(
        {"tool": st.sampled_from(TOOL_NAMES),
         "arguments": st.one_of(
             st.none(), st.just("pytest -q"),
             st.dictionaries(st.sampled_from(["cmd", "path", "file_name", "content", "n"]),
                             st.one_of(texts, st.integers(-3, 3), st.floats(0, 2)),
                             max_size=3)),
         "result": st.one_of(
             st.none(), st.just("Error: boom"), st.just("  timeout"), st.just("fine"),
             st.fixed_dictionaries({"ok": st.booleans()}),
             st.fixed_dictionaries({"exit_code": st.sampled_from([0, 1, True])}),
             st.fixed_dictionaries({"status": st.sampled_from(["ok", "Failed", "denied"])}))},
        optional={"fault": st.booleans()},
    ),
)
rows_st = st.lists(st.fixed_dictionaries(
    {"final_text": st.one_of(texts, st.none())},
    optional={"steps": st.one_of(st.lists(step_st, max_size=5), st.none(), st.just("x"))},
), max_size=6)
kinds_st = st.one_of(st.none(), st.just({"search_docs": "command", "helper": "write",
                                         "run_tests": "read"}))


def _inputs(rows: list[dict[str, Any]], kinds: Any) -> tuple[Any, ...]:
    got = TraceInputs(kinds)
    for row in rows:
        got.add(row)
    return (got.said, got.finals, got.ptr, got.codes, got.fams, got.bodies, got.paths)


def _masks(backend: ModuleType, patterns: list[str], *inputs: Any) -> list[int]:
    return list(backend.trace_masks(patterns, list(claims.CLAIM_FAMILIES), *inputs))


@SETTINGS
@given(rows=rows_st, kinds=kinds_st)
def test_native_equals_pure(
    both_backends: tuple[ModuleType, ModuleType], rows: list[dict[str, Any]], kinds: Any
) -> None:
    native, pure = both_backends
    inputs = _inputs(rows, kinds)
    assert _masks(native, trace_patterns(), *inputs) == _masks(pure, trace_patterns(), *inputs)


@SETTINGS
@given(rows=rows_st, kinds=kinds_st)
def test_masks_equal_trace_flags(rows: list[dict[str, Any]], kinds: Any) -> None:
    want = [sum(1 << FLAGS.index(f["flag"]) for f in trace_flags(r, kinds=kinds)) for r in rows]
    assert flag_masks(rows, kinds) == want


def _search_bits(backend: ModuleType, pattern: str, items: list[str]) -> list[bool]:
    """Whether ``pattern`` is found in each text, read through the kernel's first rule."""
    patterns = [pattern] + [NEVER] * 12
    n = len(items)
    masks = backend.trace_masks(patterns, ["lookup"], items, items, array("q", [0] * (n + 1)),
                                array("q"), array("q"), [], [])
    return [bool(m & 1) for m in masks]


@SETTINGS
@given(items=st.lists(st.one_of(texts, st.text(st.characters(blacklist_characters="\x01"))),
                      max_size=6))
def test_every_pattern_searches_like_re(backend: ModuleType, items: list[str]) -> None:
    for pattern in trace_patterns():
        want = _like_re(pattern, items)
        assert _search_bits(backend, pattern, items) == want, pattern[:60]


def _like_re(pattern: str, items: list[str]) -> list[bool]:
    """What ``re.search(pattern, t, re.IGNORECASE)`` finds at the tables' Unicode version: the
    pinned rewrite of the pattern (checked against ``re`` itself on a Python of that version)."""
    pinned = pinned_regex(pattern, re.IGNORECASE)
    want = [pinned.search(t) is not None for t in items]
    if unicodedata.unidata_version == UNICODE_VERSION:
        assert want == [re.search(pattern, t, re.IGNORECASE) is not None for t in items]
    return want


@pytest.mark.parametrize("pattern", [
    "[a-z]", "[A-Z0-9_-]", "k", "i", "s", "K", r"\w", r"\s", r"\d", r"\W", r"\S", r"\D",
    r"\b\w", r"\w\b", r"[^\s'\"]", r"[^/\\]x",
])
def test_each_code_point_like_re(both_backends: tuple[ModuleType, ...], pattern: str) -> None:
    """The matcher's case folding and character classes on every code point of the BMP, on
    both backends (the pure twin is ``re`` over the pinned rewrite of the pattern)."""
    items = [chr(c) for c in range(0x10000) if c != 1] + ["\U0001d7d8", "\U00020000", "\ud800"]
    items = [t + "x" if pattern.endswith("x") else t for t in items]
    want = _like_re(pattern, items)
    for backend in both_backends:
        got = _search_bits(backend, pattern, items)
        assert [t for t, a, b in zip(items, want, got, strict=True) if a != b] == []


def test_refuses_what_it_cannot_match_exactly(both_backends: tuple[ModuleType, ...]) -> None:
    native, _ = both_backends
    for pattern in [r"a.b", r"(?=a)", r"(?:a?)*", r"\1", "é", r"a$", r"[\w]"]:
        with pytest.raises(ValueError, match="is not supported"):
            _search_bits(native, pattern, ["a"])


def test_bad_inputs_same_errors(backend: ModuleType) -> None:
    with pytest.raises(ValueError, match="must hold 13 patterns"):
        backend.trace_masks(["x"], [], [], [], [0], [], [], [], [])
    with pytest.raises(ValueError, match="one item per row"):
        backend.trace_masks([NEVER] * 13, [], ["a"], [], [0, 0], [], [], [], [])
    with pytest.raises(ValueError, match="one item per row"):
        backend.trace_masks([NEVER] * 13, [], [], [], [0, 1], [0], [0], [""], [""])


def test_texts_may_be_any_iterable(backend: ModuleType) -> None:
    """Both backends read each text argument as any iterable of str (the stub's contract)."""
    patterns = [r"\btests?\s+pass\b"] + [NEVER] * 12
    masks = backend.trace_masks(iter(patterns), iter(["lookup"]), iter(["All tests pass."]),
                                iter(["done"]), [0, 1], [3], [0], iter(["pytest"]), iter([""]))
    assert list(masks) == list(backend.trace_masks(patterns, ["lookup"], ["All tests pass."],
                                                   ["done"], [0, 1], [3], [0], ["pytest"], [""]))
    assert masks[0] & 1
    with pytest.raises(TypeError, match=r"texts\[0\] must be str"):
        backend.trace_masks(patterns, [], [b"bytes"], [""], [0, 0], [], [], [], [])


def test_claims_read_their_family_and_form(backend: ModuleType) -> None:
    """A finished-state claim needs no tool; a first-person one with only a failed step fires."""
    rows = [{"final_text": "Your order is refunded."},
            {"final_text": "I refunded it and then emailed you.",
             "steps": [{"tool": "refund_order", "result": {"ok": False}},
                       {"tool": "send_email"}]},
            {"final_text": "I looked it up but got an error.",
             "steps": [{"tool": "lookup_order", "result": {"error": "x"}}]}]
    inputs = _inputs(rows, None)
    masks = _masks(backend, trace_patterns(), *inputs)
    assert [m >> FLAGS.index("lie.claimed_action") & 1 for m in masks] == [0, 1, 0]


def test_backend_switch_serves_the_kernel() -> None:
    backend = importlib.import_module("whileai._backend")
    assert "trace_masks" in backend.kernel_names()


class _Result(dict):  # type: ignore[type-arg]
    """A dict subclass: ``step_failed`` reads it without the plain-dict shortcut."""


@SETTINGS
@given(result=st.dictionaries(
    st.sampled_from(["ok", "exit_code", "returncode", "error", "status", "stale", "malformed",
                     "data"]),
    st.one_of(st.booleans(), st.none(), st.integers(-1, 2), st.sampled_from(["", "x", "Failed"])),
    max_size=4,
), fault=st.one_of(st.none(), st.booleans()))
def test_step_failed_reads_a_plain_dict_as_any_dict(result: dict[str, Any], fault: Any) -> None:
    plain, sub = {"result": result, "fault": fault}, {"result": _Result(result), "fault": fault}
    assert step_failed(plain) == step_failed(sub)
