"""The n-gram index on both backends: same scans, same exact matches, same bytes, same errors."""

from __future__ import annotations

import pickle
from types import ModuleType
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from _kernel_helpers import backend_settings, golden, golden_params, outcome

GOLDEN = golden("ngram")["cases"]
SETTINGS = backend_settings(150)
# A small vocabulary so that eval and train texts share n-grams often.
words = st.sampled_from(
    ["order", "where", "is", "my", "4412", "注", "文", "Σίσυφος", "due", "A",
     "\u043erder", "wh\u200bere", "\uff4dy", "d\u00adue", "Σι\u0301συφος"]
)
seps = st.sampled_from([" ", ", ", "\n", "!", ""])
texts = st.lists(st.tuples(words, seps), max_size=14).map(lambda ws: "".join(a + b for a, b in ws))
any_texts = st.lists(st.one_of(texts, st.text(max_size=20)), max_size=8)


@SETTINGS
@given(evals=any_texts, train=any_texts, n=st.integers(1, 5))
def test_index_scans_and_bytes_match(
    both_backends: tuple[ModuleType, ModuleType], evals: list[str], train: list[str], n: int
) -> None:
    native, pure = both_backends
    a, b = native.NgramIndex(evals, n), pure.NgramIndex(evals, n)
    assert (a.n, a.size, len(a), repr(a)) == (b.n, b.size, len(b), repr(b))
    assert a.scan(train) == b.scan(train)
    assert a.exact(train) == b.exact(train)
    assert a.check(train) == b.check(train) == (b.exact(train), *b.scan(train))
    assert a.to_bytes() == b.to_bytes()
    # A state written by one backend loads in the other.
    assert native.NgramIndex.from_bytes(b.to_bytes()).scan(train) == b.scan(train)


@SETTINGS
@given(
    evals=st.one_of(any_texts, st.lists(st.one_of(st.integers(), st.none(), texts), max_size=4)),
    n=st.one_of(st.integers(-2, 3), st.floats(), st.booleans(), st.none()),
)
def test_bad_arguments_raise_the_same_error(
    both_backends: tuple[ModuleType, ModuleType], evals: list[Any], n: Any
) -> None:
    native, pure = both_backends
    got = outcome(lambda: native.NgramIndex(evals, n).to_bytes())
    want = outcome(lambda: pure.NgramIndex(evals, n).to_bytes())
    assert got == want


@pytest.mark.parametrize(
    "state",
    [b"", b"WNGRAM01", b"XXXXXXXX" + bytes(40), "text", 3, b"WNGRAM01" + bytes(41)],
)
def test_bad_state_raises_the_same_error(
    both_backends: tuple[ModuleType, ModuleType], state: Any
) -> None:
    native, pure = both_backends
    got = outcome(lambda: native.NgramIndex.from_bytes(state))
    want = outcome(lambda: pure.NgramIndex.from_bytes(state))
    assert got[0] != "ok"
    assert got == want


def test_truncated_state_is_refused(both_backends: tuple[ModuleType, ModuleType]) -> None:
    native, pure = both_backends
    state = pure.NgramIndex(["a b c d"], 2).to_bytes()[:-8]
    assert outcome(lambda: native.NgramIndex.from_bytes(state)) == outcome(
        lambda: pure.NgramIndex.from_bytes(state)
    )


def test_scan_reports_best_coverage_and_shared_words(backend: ModuleType) -> None:
    index = backend.NgramIndex(["the quick brown fox jumps", "lazy dog sleeps all day"], n=2)
    best, covered, total, shared = index.scan(["a quick brown fox", "nothing here", "lazy dog"])
    assert list(best) == [0, -1, 1]
    assert list(covered) == [3, 0, 2]
    assert list(total) == [4, 2, 2]
    assert shared == [["quick", "brown"], [], ["lazy", "dog"]]


def test_index_pickles_and_keeps_answers(backend: ModuleType) -> None:
    index = backend.NgramIndex(["注文を確認してください", "order 4412 is late"], n=3)
    again = pickle.loads(pickle.dumps(index))
    probe = ["注文を確認して", "Order 4412 is late!"]
    assert again.scan(probe) == index.scan(probe)
    assert list(again.exact(probe)) == [-1, 1]
    assert (again.n, again.size) == (3, 2)


def test_golden_file_holds_every_case() -> None:
    assert len(GOLDEN) == 4


@pytest.mark.parametrize("case", golden_params(GOLDEN, lambda c: f"n{c['n']}"))
def test_golden_vectors(backend: ModuleType, case: dict[str, Any]) -> None:
    index = backend.NgramIndex(case["evals"], case["n"])
    best, covered, total, shared = index.scan(case["probes"])
    assert (list(best), list(covered), list(total)) == (
        case["best"],
        case["covered"],
        case["total"],
    )
    assert shared == case["shared"]
    assert list(index.exact(case["probes"])) == case["exact"]
    exact, *scan = index.check(case["probes"])
    assert (list(exact), [list(x) for x in scan[:3]], scan[3]) == (
        case["exact"],
        [case["best"], case["covered"], case["total"]],
        case["shared"],
    )
    assert index.to_bytes().hex() == case["state_hex"]
