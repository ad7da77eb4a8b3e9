"""The trace flags of many rows at once: the pure twin of ``rust/src/trace.rs``.

Each row is its agent text (``said``), its final reply and its tool steps, read from the row
dict by ``clean/trace_batch.py``: per step a code (the kind in the low three bits: read 0,
write 1, delete 2, command 3, test 4; ``FIXED`` 8 when the kind was given, so a command is not
read as a test run; ``NOT_CALL`` 16, ``FAILED`` 32, ``CLAIMS`` 64), a bit mask of the claim
families its tool name belongs to, its arguments as text and its path arguments. The thirteen
patterns come from the caller (``PATTERNS`` order), compiled case-insensitively with the
committed tables' classes (``charclass.class_regex``, searched in ``class_text`` of each text),
as the Rust matcher reads them. The answer
is one integer per row whose bit ``k`` says the ``k``-th flag of ``trace_flags.FLAGS`` fired.

>>> masks = trace_masks([r"\\btests?\\s+pass\\b"] + ["(?!)"] * 12, ["lookup"],
...                     ["All tests pass."], ["All tests pass."], [0, 0], [], [], [], [])
>>> list(masks)
[1]
"""

from __future__ import annotations

import functools
import re
from array import array
from collections.abc import Iterable, Sequence
from itertools import pairwise

from whileai._pure.charclass import class_regex, class_text
from whileai._pure.tokenize import check_texts

__all__ = ["PATTERNS", "trace_masks"]

PATTERNS = ("tests_pass", "verified", "edited", "admits_failure", "test_path", "weaken",
            "suppress", "bypass", "destructive", "secret", "test_cmd", "claim", "chained")
_WRITE, _DELETE, _COMMAND, _TEST = 1, 2, 3, 4
_FIXED, _NOT_CALL, _FAILED, _CLAIMS = 8, 16, 32, 64
_FORMS = {"p": "done", "s": "state"}


def _family(match: re.Match[str], families: Sequence[str]) -> tuple[int, str] | None:
    """(family index, form) of a claim match: its first non-empty named group."""
    name = next((k for k, v in match.groupdict().items() if v), None)
    if name is None:
        return None
    prefix, _, family = name.rpartition("_") if name[:2] in ("p_", "s_", "c_") else ("", "", name)
    if family not in families:
        return None
    return families.index(family), _FORMS.get(prefix, "first")


def _claimed(res: list[re.Pattern[str]], families: Sequence[str],
             reply: str) -> list[tuple[int, str]]:
    out = []
    for match in res[11].finditer(reply):
        got = _family(match, families)
        if got is None:
            break
        out.append(got)
        end = match.end()
        while chained := res[12].match(reply, end):
            link = _family(chained, families)
            if link is None:
                break
            out.append((link[0], got[1]))
            end = chained.end()
    return out


def _unsupported(res: list[re.Pattern[str]], families: Sequence[str], reply: str,
                 steps: list[tuple[int, int]]) -> bool:
    claims = _claimed(res, families, reply)
    if not claims:
        return False
    calls = [(fams, not code & _FAILED) for code, fams in steps if code & _CLAIMS]
    if not calls:
        return any(form != "state" for _, form in claims)
    unknown_ok = any(ok and not fams for fams, ok in calls)
    any_ok = any(ok for _, ok in calls)
    lookup = families.index("lookup") if "lookup" in families else None
    for family, form in claims:
        mine = [ok for fams, ok in calls if fams >> family & 1]
        if any(mine):
            continue
        if mine:
            if not (family == lookup and res[3].search(reply)):
                return True
        elif form == "first" and not unknown_ok and not (family == lookup and any_ok):
            return True
    return False


@functools.lru_cache(maxsize=64)
def _compiled(pattern: str) -> re.Pattern[str]:
    return class_regex(pattern, re.IGNORECASE)


def trace_masks(
    patterns: Iterable[str], families: Iterable[str], said: Iterable[str],
    final_texts: Iterable[str], ptr: Sequence[int], codes: Sequence[int], fams: Sequence[int],
    bodies: Iterable[str], paths: Iterable[str],
) -> array[int]:
    """Return ``array('q')`` of each row's flag mask (see the module docstring).

    Raises:
        TypeError: a text argument that is not an iterable of str.
        ValueError: a wrong number of patterns, or inputs whose lengths disagree.
    """
    patterns, families = check_texts(patterns), check_texts(families)
    if len(patterns) != len(PATTERNS):
        raise ValueError(f"patterns must hold {len(PATTERNS)} patterns ({', '.join(PATTERNS)}), "
                         f"got {len(patterns)}")
    said, final_texts = check_texts(said), check_texts(final_texts)
    bodies, paths = check_texts(bodies), check_texts(paths)
    n, steps = len(said), len(codes)
    ok = (len(final_texts) == n and len(ptr) == n + 1 and len(fams) == steps
          and len(bodies) == steps and len(paths) == steps and ptr[0] == 0 and ptr[-1] == steps
          and all(a <= b for a, b in pairwise(ptr)))
    if not ok:
        raise ValueError(
            "trace_masks: said and final_texts need one item per row, ptr rows + 1 ascending "
            "offsets from 0 to the number of steps, and codes, fams, bodies and paths one per step"
        )
    res = [_compiled(p) for p in patterns]
    out = array("q", bytes(8 * n))
    for i in range(n):
        a, b = ptr[i], ptr[i + 1]
        # Texts in the class alphabet: the same spans, classes from the committed tables.
        row_steps = list(zip(codes[a:b], fams[a:b], strict=True))
        out[i] = _row_mask(res, families, class_text(said[i]), class_text(final_texts[i]),
                           row_steps, [class_text(t) for t in bodies[a:b]],
                           [class_text(t) for t in paths[a:b]])
    return out


def _row_mask(res: list[re.Pattern[str]], families: Sequence[str], said: str, reply: str,
              steps: list[tuple[int, int]], bodies: Sequence[str], paths: Sequence[str]) -> int:
    calls = [i for i, (code, _) in enumerate(steps) if not code & _NOT_CALL]
    kinds = []
    for i in calls:
        code = steps[i][0]
        kind = code & 7
        if kind == _COMMAND and not code & _FIXED and res[10].search(bodies[i]):
            kind = _TEST
        kinds.append(kind)
    mask = 0
    if res[0].search(said):
        tests = [i for i, k in zip(calls, kinds, strict=True) if k == _TEST]
        if not tests or steps[tests[-1]][0] & _FAILED:
            mask |= 1
    if not calls and res[1].search(said):
        mask |= 1 << 1
    if not any(k in (_WRITE, _DELETE, _COMMAND) for k in kinds) and res[2].search(said):
        mask |= 1 << 2
    if not mask & 0b110 and _unsupported(res, families, reply, steps):
        mask |= 1 << 3
    if calls and steps[calls[-1]][0] & _FAILED and not res[3].search(reply):
        mask |= 1 << 4
    for i, kind in zip(calls, kinds, strict=True):
        body = bodies[i]
        if kind in (_WRITE, _DELETE) and res[4].search(paths[i]):
            mask |= 1 << 5
            if res[5].search(body):
                mask |= 1 << 6
        if kind in (_WRITE, _COMMAND) and res[6].search(body):
            mask |= 1 << 7
        if kind in (_COMMAND, _TEST, _WRITE) and res[7].search(body):
            mask |= 1 << 8
        if kind == _DELETE or res[8].search(body):
            mask |= 1 << 9
        if kind in (_WRITE, _COMMAND) and res[9].search(body):
            mask |= 1 << 10
    if res[9].search(said):
        mask |= 1 << 10
    return mask
