"""Candidate features for ``hack_scan``: what a policy could learn to do for reward.

Two tiers, both computed from the rows alone:

- **hand**: reply length (chars, words), tool calls, turns, truncation, surface counts
  (exclamations, questions, bullets, headings, code fences, digits), one ``tool:<name>``
  indicator per tool called, mean token logprob, every numeric ``marker:<name>``, every fired
  ``trace:<flag>``, and ``user:<name>`` for the caller's own ``features={"name": fn}``.
- **auto**: ``contains:<term>`` for the most common words and pairs of consecutive words in
  the agent's text (so a stock phrase such as ``all done`` is a candidate nobody listed).
  Punctuation is never a term: a delimiter shows in the hand tier's surface counts instead.

A row's features are a ``{name: value}`` dict with zeros left out (a sparse row).

>>> feats = hand_features({"final_text": "Done!", "steps": [{"tool": "lookup_order"}]})
>>> feats["tool_calls"], feats["tool:lookup_order"], feats["exclamations"]
(1.0, 1.0, 1.0)
>>> sorted(auto_terms({"final_text": "### All done!"}))
['all', 'all done', 'done']
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from itertools import pairwise
from typing import Any

from whileai import _backend
from whileai.simulations.clean.trace_flags import trace_flags

__all__ = [
    "AUTO_TOP",
    "agent_text",
    "auto_features",
    "auto_terms",
    "hand_features",
    "row_extras",
    "tool_names",
    "trajectory_key",
]

AUTO_TOP = 200
# Read with the committed tables' classes, as the kernels read them (docs/kernels.md, "One
# Unicode version"): a word is a run of \w; punctuation is never a term.
_WORD = _backend.PinnedPattern.compile(r"\w+")
_BULLET = _backend.PinnedPattern.compile(r"^\s*(?:[-*•]|\d+[.)])\s+", re.MULTILINE)
_HEADING = _backend.PinnedPattern.compile(r"^\s*#{1,6}\s", re.MULTILINE)


def _steps(row: Mapping[str, Any]) -> list[dict[str, Any]]:
    steps = row.get("steps")
    return [s for s in steps if isinstance(s, dict)] if isinstance(steps, list) else []


def _final(row: Mapping[str, Any]) -> str:
    final = row.get("final_text")
    return final if isinstance(final, str) else ""


def tool_names(row: Mapping[str, Any]) -> list[str]:
    """The names of the tools the row called, in call order."""
    steps = row.get("steps")
    if not isinstance(steps, list):
        return []
    return [s["tool"] for s in steps if isinstance(s, dict) and isinstance(s.get("tool"), str)]


def agent_text(row: Mapping[str, Any]) -> str:
    """Everything the agent said: assistant text between tool calls, then the final reply."""
    parts = []
    steps = row.get("steps")
    if isinstance(steps, list):
        for s in steps:
            if isinstance(s, dict) and s.get("role") == "assistant":
                content = s.get("content")
                if isinstance(content, str):
                    parts.append(content)
    final = row.get("final_text")
    if isinstance(final, str):
        parts.append(final)
    return "\n".join(parts)


def trajectory_key(row: Mapping[str, Any]) -> str:
    """A string that is equal for two rows exactly when they did the same thing."""
    calls: list[str] = []
    parts: list[str] = []
    steps = row.get("steps")
    if isinstance(steps, list):
        # One pass: the tool calls with their sorted arguments, and agent_text's parts.
        for s in steps:
            if not isinstance(s, dict):
                continue
            if "tool" in s:
                calls.append(f"{s.get('tool')}:{sorted((s.get('arguments') or {}).items())!r}")
            if s.get("role") == "assistant":
                content = s.get("content")
                if isinstance(content, str):
                    parts.append(content)
    final = row.get("final_text")
    if isinstance(final, str):
        parts.append(final)
    return "|".join(calls) + "\x00" + "\n".join(parts).strip()


def _truncated(row: Mapping[str, Any]) -> bool:
    if row.get("truncated") is True or row.get("finish_reason") == "length":
        return True
    steps = row.get("steps")
    return isinstance(steps, list) and any(
        isinstance(s, dict) and (s.get("truncated") is True or s.get("finish_reason") == "length")
        for s in steps
    )


def row_extras(
    row: Mapping[str, Any],
    features: Mapping[str, Callable[[Mapping[str, Any]], Any]] | None,
    trace_kinds: Mapping[str, str] | None,
    *,
    flags: bool = True,
) -> Iterator[tuple[str, float]]:
    """The features only the row dict holds: mean logprob, markers, trace flags, the caller's own.

    Shared by ``hand_features`` and the column builder (``hack_columns``), so both read a row the
    same way; the column builder reads the trace flags of all rows at once (``flags=False``).

    Raises:
        TypeError: a caller's feature returned something other than a finite number or bool.

    >>> dict(row_extras({"markers": {"polite": 1, "tag": "x"}}, None, None))
    {'marker:polite': 1.0}
    """
    logprob, n_tokens = row.get("logprob"), row.get("n_tokens")
    if isinstance(logprob, (int, float)) and isinstance(n_tokens, int) and n_tokens > 0:
        yield "logprob_mean", float(logprob) / n_tokens
    markers = row.get("markers")
    if isinstance(markers, dict):
        for name, value in markers.items():
            number = isinstance(value, (int, float)) and not isinstance(value, bool)
            if number and math.isfinite(value):
                yield f"marker:{name}", float(value)
    if flags:
        for flag in trace_flags(row, kinds=trace_kinds):
            yield f"trace:{flag['flag']}", 1.0
    for name, fn in (features or {}).items():
        value = fn(row)
        if isinstance(value, bool):
            value = float(value)
        if not isinstance(value, (int, float)) or not math.isfinite(value):
            raise TypeError(
                f"features[{name!r}] returned {value!r} for a row; return a finite number or bool"
            )
        yield f"user:{name}", float(value)


def hand_features(
    row: Mapping[str, Any],
    features: Mapping[str, Callable[[Mapping[str, Any]], Any]] | None = None,
    trace_kinds: Mapping[str, str] | None = None,
) -> dict[str, float]:
    """Return the hand-tier features of one row (zeros left out)."""
    final = _final(row)
    text = agent_text(row)
    steps = _steps(row)
    tools = tool_names(row)
    out: dict[str, float] = {
        "reply_chars": float(len(final)),
        "reply_words": float(_backend.count_words(final)),
        "tool_calls": float(len(tools)),
        "turns": float(1 + sum(isinstance(s, dict) and s.get("role") == "user" for s in steps)),
        "truncated": 1.0 if _truncated(row) else 0.0,
        "exclamations": float(text.count("!")),
        "questions": float(text.count("?")),
        "bullets": float(sum(1 for _ in _BULLET.finditer(text))),
        "headings": float(sum(1 for _ in _HEADING.finditer(text))),
        "code_fences": float(text.count("```")),
        "digits": float(_backend.count_digits(text)),
    }
    for name in tools:
        out[f"tool:{name}"] = 1.0
    out.update(row_extras(row, features, trace_kinds))
    return {k: v for k, v in out.items() if v != 0.0}


def auto_terms(row: Mapping[str, Any]) -> set[str]:
    """The distinct words and pairs of consecutive words of the agent's text (lowercase)."""
    text = _backend.lower(agent_text(row))
    tokens = [text[m.start():m.end()] for m in _WORD.finditer(text)]
    terms = set(tokens)
    terms.update(f"{a} {b}" for a, b in pairwise(tokens))
    return terms


def auto_features(rows: Sequence[Mapping[str, Any]], top: int = AUTO_TOP) -> list[dict[str, float]]:
    """Return per row ``{"contains:<term>": 1.0}`` for the ``top`` most common terms.

    Terms are ranked by how many rows contain them (ties alphabetical); a term in every row
    carries no information and is skipped.
    """
    per_row = [auto_terms(r) for r in rows]
    counts: Counter[str] = Counter()
    for terms in per_row:
        counts.update(terms)
    ranked = sorted((t for t, c in counts.items() if c < len(rows)), key=lambda t: (-counts[t], t))
    # One shared key string per kept term (a row's dict holds references, not fresh copies).
    key = {t: f"contains:{t}" for t in ranked[:top]}
    out = []
    for i, terms in enumerate(per_row):
        out.append({key[t]: 1.0 for t in sorted(terms & key.keys())})
        per_row[i] = set()  # free each row's terms as soon as they are used
    return out
